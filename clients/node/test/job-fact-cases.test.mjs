// The job facts' case table (crates/onceq/sql/cases/job_fact.json, shipped
// in the package's sql/), run on the real PostgreSQL through the package's
// own fact functions: every case on a fresh table (a schema of its own),
// failing on a step that disagrees, an op it does not know, or an
// expectation it does not check.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import test from "node:test";

import pg from "pg";

import { claimFact, heartbeatFact, markFactDone, purgeDoneFacts, releaseFact, sqlDir, sqlFile } from "../dist/index.js";
import { DATABASE_URL } from "../test-support/env.mjs";

const table = JSON.parse(readFileSync(join(sqlDir, "cases", "job_fact.json"), "utf8"));
const epoch = Date.parse(table.epoch);
const at = (s) => new Date(epoch + s * 1000);

function only(expect, keys, where) {
  for (const k of Object.keys(expect ?? {})) {
    if (!keys.includes(k)) assert.fail(`${where}: expectation "${k}" is not one this runner checks`);
  }
}

const ops = {
  async claim(db, s, where) {
    only(s.expect, ["state", "locked_until", "attempts"], where);
    const got = await claimFact(db, s.fact, s.owner, s.claim, at(s.at), at(s.at + s.lease));
    assert.equal(got.state, s.expect.state, `${where}: state`);
    if ("attempts" in s.expect) assert.equal(got.attempts, s.expect.attempts, `${where}: attempts`);
    if ("locked_until" in s.expect) {
      assert.equal(got.state, "held", `${where}: locked_until is only told for held`);
      assert.equal(got.lockedUntil.getTime(), at(s.expect.locked_until).getTime(), `${where}: locked_until`);
    }
  },
  async heartbeat(db, s, where) {
    only(s.expect, ["applied"], where);
    assert.equal(await heartbeatFact(db, s.fact, s.claim, at(s.at + s.lease)), s.expect.applied, `${where}: applied`);
  },
  async mark_done(db, s, where) {
    only(s.expect, ["applied"], where);
    await db.query("BEGIN");
    const applied = await markFactDone(db, s.fact, s.claim, at(s.at));
    assert.equal(applied, s.expect.applied, `${where}: applied`);
    if (s.rollback) {
      await db.query("ROLLBACK");
      const r = await db.query("SELECT state FROM onceq_job_facts WHERE fact = $1", [s.fact]);
      assert.equal(r.rows[0]?.state, "running", `${where}: after the rollback the fact is still running`);
    } else {
      await db.query("COMMIT");
    }
  },
  async release(db, s, where) {
    only(s.expect, ["applied"], where);
    assert.equal(await releaseFact(db, s.fact, s.claim), s.expect.applied, `${where}: applied`);
  },
  async purge(db, s, where) {
    only(s.expect, ["deleted"], where);
    assert.equal(await purgeDoneFacts(db, at(s.before)), s.expect.deleted, `${where}: deleted`);
  },
};

const STEP_KEYS = new Set(["op", "at", "fact", "owner", "claim", "lease", "before", "expect", "rollback"]);

test(`job_fact.json: ${table.cases.length} cases on PostgreSQL`, async () => {
  assert.ok(table.cases.length > 0);
  const db = new pg.Client({ connectionString: DATABASE_URL });
  await db.connect();
  try {
    for (const [n, c] of table.cases.entries()) {
      const schema = `jf_case_${process.pid}_${n}`;
      await db.query(`CREATE SCHEMA ${schema}`);
      await db.query(`SET search_path TO ${schema}`);
      try {
        await db.query("BEGIN");
        await db.query(sqlFile("job_fact/postgres/schema.sql"));
        await db.query("COMMIT");
        for (const [i, s] of c.steps.entries()) {
          const where = `case "${c.name}", step ${i + 1} (${s.op})`;
          const run = ops[s.op];
          if (!run) assert.fail(`${where}: unknown op "${s.op}"`);
          for (const k of Object.keys(s)) if (!STEP_KEYS.has(k)) assert.fail(`${where}: unknown field "${k}"`);
          await run(db, s, where);
        }
      } finally {
        await db.query("ROLLBACK").catch(() => {});
        await db.query("SET search_path TO public");
        await db.query(`DROP SCHEMA ${schema} CASCADE`);
      }
    }
  } finally {
    await db.end();
  }
});
