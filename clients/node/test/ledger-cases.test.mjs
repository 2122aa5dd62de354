// The shared case table (crates/onceq/sql/cases/ledger.json, copied into
// sql/cases/ by the build) run on real PostgreSQL through the package's
// ledger core: the same statements, the same outcomes and the same HTTP
// answers as the server's and the Rust toolkit's runners.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";

import { IDEMPOTENT_REPLAYED, PgLedger, answerFor } from "../dist/ledger/index.js";
import { freshLedgerPool } from "./ledger-support.mjs";

const table = JSON.parse(readFileSync(new URL("../sql/cases/ledger.json", import.meta.url), "utf8"));
const epoch = Date.parse(table.epoch);
const at = (secs) => new Date(epoch + secs * 1000);
const label = (b) => createHash("sha256").update(b, "utf8").digest();
const text = (buf) => buf.toString("utf8");

/** The layer's default mismatch status (the case table's `http` assumes it). */
const MISMATCH_STATUS = 422;

async function runStep(ledger, step, where) {
  const scope = step.scope ?? "s";
  const now = at(step.at);
  switch (step.op) {
    case "claim": {
      const outcome = await ledger.claim(
        {
          scope,
          key: step.key,
          fingerprint: label(step.body),
          token: step.token,
          lockedUntil: at(step.at + step.lease),
          expiresAt: at(step.at + step.retention),
        },
        now,
      );
      const e = step.expect;
      assert.equal(outcome.outcome, e.outcome, `${where}: outcome`);
      if (e.outcome === "in_flight") {
        assert.equal(outcome.lockedUntil.getTime(), at(e.locked_until).getTime(), `${where}: locked_until`);
      }
      if (e.outcome === "completed") {
        assert.equal(outcome.response.status, e.status, `${where}: status`);
        assert.deepEqual(outcome.response.headers, e.headers, `${where}: headers`);
        assert.equal(text(outcome.response.body), e.body, `${where}: body`);
      }
      if (step.http) checkHttp(answerFor(outcome, now, MISMATCH_STATUS), step.http, where);
      return;
    }
    case "complete": {
      const applied = await ledger.complete(
        scope,
        step.key,
        step.token,
        { status: step.status, headers: step.headers, body: Buffer.from(step.body, "utf8") },
        now,
      );
      assert.equal(applied, step.expect.applied, `${where}: applied`);
      return;
    }
    case "release": {
      const applied = await ledger.release(scope, step.key, step.token);
      assert.equal(applied, step.expect.applied, `${where}: applied`);
      return;
    }
    case "purge": {
      const deleted = await ledger.purgeBatch(now, step.limit);
      assert.equal(deleted, step.expect.deleted, `${where}: deleted`);
      return;
    }
    default:
      // A runner that skips an op it does not know would pass for nothing.
      assert.fail(`${where}: unknown op ${JSON.stringify(step.op)}`);
  }
}

/** What the HTTP layer answers for the outcome, as the case says. */
function checkHttp(answer, http, where) {
  assert.ok(answer, `${where}: the outcome has no HTTP answer of its own`);
  assert.equal(answer.status, http.status, `${where}: http status`);
  const header = (n) => answer.headers.filter(([k]) => k === n).map(([, v]) => v);
  if ("retry_after" in http) assert.deepEqual(header("retry-after"), [String(http.retry_after)], `${where}: Retry-After`);
  if (http.replay) assert.deepEqual(header(IDEMPOTENT_REPLAYED), ["true"], `${where}: replay marker`);
  else assert.deepEqual(header(IDEMPOTENT_REPLAYED), [], `${where}: not a replay`);
  for (const k of Object.keys(http)) {
    assert.ok(["status", "retry_after", "replay"].includes(k), `${where}: unknown http expectation ${k}`);
  }
}

describe("the shared ledger cases", () => {
  let db;
  before(async () => {
    db = await freshLedgerPool();
  });
  after(() => db.close());

  test("the table has cases", () => assert.ok(table.cases.length > 0));

  test("a step with an op the runner does not know fails", async () => {
    await assert.rejects(runStep(new PgLedger(db.pool), { op: "frobnicate", at: 0 }, "made up"), /unknown op "frobnicate"/);
  });

  for (const c of table.cases) {
    test(c.name, async () => {
      // A fresh table per case.
      await db.pool.query("TRUNCATE onceq_request_ledger");
      const ledger = new PgLedger(db.pool);
      for (const [i, step] of c.steps.entries()) {
        await runStep(ledger, step, `case "${c.name}" step ${i + 1} (${step.op} at ${step.at})`);
      }
    });
  }
});
