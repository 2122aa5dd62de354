// The Express middleware over real HTTP (a real Express server on
// 127.0.0.1:0) and a real PostgreSQL ledger, with a clock the tests move.
import assert from "node:assert/strict";
import http from "node:http";
import { after, before, beforeEach, test } from "node:test";

import express from "express";
import pg from "pg";

import { idempotency, keepRawBody, migrate, startPurger } from "../dist/express.js";
import { migrate as migrateAll } from "../dist/index.js";
import { errorOf, freshLedgerPool, gate, post, testClock } from "./ledger-support.mjs";

let db;
before(async () => {
  db = await freshLedgerPool();
});
after(() => db.close());
beforeEach(() => db.pool.query("TRUNCATE onceq_request_ledger"));

/** An app whose routes count their runs; `name` tells instances apart. */
async function start(t, { name = "a", clock = testClock(), options = {}, hooks = {} } = {}) {
  const runs = [];
  const app = express();
  const idem = idempotency({ pool: db.pool, now: clock.now, log: () => {}, ...options });
  app.post("/api/exports", idem, async (req, res) => {
    runs.push(req.body);
    if (hooks.entered) hooks.entered();
    if (hooks.wait) await hooks.wait;
    const status = hooks.status ? hooks.status() : 202;
    res.status(status).set("x-run", String(runs.length)).json({ by: name, run: runs.length, key: req.idempotencyKey, body: req.body });
  });
  app.post("/api/other", idem, (req, res) => {
    runs.push(req.body);
    res.status(201).json({ route: "other", run: runs.length });
  });
  app.post("/api/throws", idem, () => {
    runs.push("throws");
    throw new Error("boom");
  });
  app.post("/api/stream", idem, (req, res) => {
    runs.push("stream");
    res.status(200).type("text/plain");
    res.write("chunk-1 ");
    res.write(Buffer.from("chunk-2 "));
    res.end(`run ${runs.length}`);
  });
  // A thrown handler ends in the app's error handler, as in a real app.
  app.use((_err, _req, res, _next) => res.status(500).json({ error: { code: "INTERNAL" } }));
  const server = app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  t.after(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });
  const url = `http://127.0.0.1:${server.address().port}`;
  return { url, runs, clock, idem };
}

test("a double tap runs the handler once and answers the same twice", async (t) => {
  const app = await start(t);
  const first = await post(`${app.url}/api/exports`, { key: "k1", body: '{"tenant":"acme"}' });
  const second = await post(`${app.url}/api/exports`, { key: "k1", body: '{"tenant":"acme"}' });
  assert.equal(app.runs.length, 1);
  assert.equal(first.status, 202);
  assert.equal(second.status, 202);
  assert.equal(second.text, first.text);
  assert.equal(second.headers.get("x-run"), "1");
  assert.equal(second.headers.get("content-type"), first.headers.get("content-type"));
  assert.equal(first.headers.get("idempotent-replayed"), null);
  assert.equal(second.headers.get("idempotent-replayed"), "true");
  assert.equal(JSON.parse(first.text).key, "k1");
});

test("concurrent taps: one runs, the others are told it is in flight", async (t) => {
  const g = gate();
  const entered = gate();
  const app = await start(t, { hooks: { wait: g.opened, entered: entered.open } });
  const taps = Array.from({ length: 5 }, () => post(`${app.url}/api/exports`, { key: "k", body: '{"n":1}' }));
  await entered.opened;
  // Every tap but the one running answers while the handler is held.
  const settled = [];
  for (const p of taps) p.then((r) => settled.push(r));
  while (settled.length < 4) await new Promise((r) => setImmediate(r));
  g.open();
  const answers = await Promise.all(taps);
  assert.deepEqual(answers.map((a) => a.status).sort(), [202, 409, 409, 409, 409]);
  assert.equal(app.runs.length, 1);
});

test("the same key with another body is 422, or 409 when the route says so", async (t) => {
  const app = await start(t);
  await post(`${app.url}/api/exports`, { key: "k", body: '{"n":1}' });
  const other = await post(`${app.url}/api/exports`, { key: "k", body: '{"n":2}' });
  assert.equal(other.status, 422);
  assert.equal(errorOf(other).code, "IDEMPOTENCY_KEY_REUSED");
  assert.equal(app.runs.length, 1);

  const seedLike = await start(t, { options: { mismatchStatus: 409 } });
  const again = await post(`${seedLike.url}/api/exports`, { key: "k", body: '{"n":3}' });
  assert.equal(again.status, 409);
  assert.equal(errorOf(again).code, "IDEMPOTENCY_KEY_REUSED");
});

test("JSON key order and whitespace do not make another request", async (t) => {
  const app = await start(t);
  await post(`${app.url}/api/exports`, { key: "k", body: '{"a":1,"b":{"y":2,"x":[1,2]}}' });
  const again = await post(`${app.url}/api/exports`, { key: "k", body: '{ "b": {"x": [1, 2], "y": 2}, "a": 1 }' });
  assert.equal(again.status, 202);
  assert.equal(again.headers.get("idempotent-replayed"), "true");
  assert.equal(app.runs.length, 1);
});

test("a retry while the first is in flight is 409 with Retry-After; then the replay", async (t) => {
  const g = gate();
  const entered = gate();
  const app = await start(t, { options: { leaseMs: 30_000 }, hooks: { wait: g.opened, entered: entered.open } });
  const first = post(`${app.url}/api/exports`, { key: "k" });
  await entered.opened;
  app.clock.advance(10_500);
  const during = await post(`${app.url}/api/exports`, { key: "k" });
  assert.equal(during.status, 409);
  assert.equal(errorOf(during).code, "REQUEST_IN_FLIGHT");
  assert.equal(during.headers.get("retry-after"), "20");
  g.open();
  assert.equal((await first).status, 202);
  const later = await post(`${app.url}/api/exports`, { key: "k" });
  assert.equal(later.status, 202);
  assert.equal(later.headers.get("idempotent-replayed"), "true");
  assert.equal(app.runs.length, 1);
});

test("a request that never finishes is taken over after its lease by another instance; its late answer is fenced out", async (t) => {
  const clock = testClock();
  const stuck = gate();
  const entered = gate();
  // Instance a claims and hangs (a crashed process as far as the ledger can tell).
  const a = await start(t, { name: "a", clock, hooks: { wait: stuck.opened, entered: entered.open } });
  const b = await start(t, { name: "b", clock });
  const abandoned = post(`${a.url}/api/exports`, { key: "k" });
  await entered.opened;

  clock.advance(29_000);
  assert.equal((await post(`${b.url}/api/exports`, { key: "k" })).status, 409, "not before the lease ends");
  clock.advance(1_000);
  const takeover = await post(`${b.url}/api/exports`, { key: "k" });
  assert.equal(takeover.status, 202);
  assert.equal(JSON.parse(takeover.text).by, "b");

  // The first holder answers at last: its client gets it, the ledger keeps b's.
  stuck.open();
  assert.equal(JSON.parse((await abandoned).text).by, "a");
  const replay = await post(`${a.url}/api/exports`, { key: "k" });
  assert.equal(replay.headers.get("idempotent-replayed"), "true");
  assert.equal(JSON.parse(replay.text).by, "b");
});

test("a 5xx is not recorded: the retry runs again and its answer is kept", async (t) => {
  let fail = true;
  const app = await start(t, { hooks: { status: () => (fail ? 503 : 202) } });
  assert.equal((await post(`${app.url}/api/exports`, { key: "k" })).status, 503);
  fail = false;
  const retry = await post(`${app.url}/api/exports`, { key: "k" });
  assert.equal(retry.status, 202);
  assert.equal(retry.headers.get("idempotent-replayed"), null);
  assert.equal(app.runs.length, 2);
  assert.equal((await post(`${app.url}/api/exports`, { key: "k" })).headers.get("idempotent-replayed"), "true");
});

test("a thrown handler releases the claim", async (t) => {
  const app = await start(t);
  assert.equal((await post(`${app.url}/api/throws`, { key: "k" })).status, 500);
  assert.equal((await post(`${app.url}/api/throws`, { key: "k" })).status, 500);
  assert.equal(app.runs.length, 2);
  const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM onceq_request_ledger");
  assert.equal(rows[0].n, 0);
});

test("keys are scoped by caller and by route", async (t) => {
  const app = await start(t);
  const alice = { authorization: "Bearer alice" };
  const bob = { authorization: "Bearer bob" };
  const a = await post(`${app.url}/api/exports`, { key: "k", headers: alice, body: '{"who":"alice"}' });
  const b = await post(`${app.url}/api/exports`, { key: "k", headers: bob, body: '{"who":"bob"}' });
  const o = await post(`${app.url}/api/other`, { key: "k", headers: alice, body: '{"who":"alice"}' });
  assert.deepEqual([a.status, b.status, o.status], [202, 202, 201]);
  assert.equal(JSON.parse(b.text).body.who, "bob");
  assert.equal(app.runs.length, 3);
  // The ledger never stores the credential itself.
  const { rows } = await db.pool.query("SELECT scope FROM onceq_request_ledger ORDER BY scope");
  assert.ok(rows.every((r) => !r.scope.includes("alice") && !r.scope.includes("bob")));
  assert.ok(rows.some((r) => r.scope.endsWith(" POST /api/other")));

  const custom = await start(t, { options: { principal: (req) => req.get("x-tenant") } });
  await post(`${custom.url}/api/exports`, { key: "k2", headers: { "x-tenant": "t1" } });
  await post(`${custom.url}/api/exports`, { key: "k2", headers: { "x-tenant": "t2" } });
  await post(`${custom.url}/api/exports`, { key: "k2", headers: { "x-tenant": "t1" } });
  assert.equal(custom.runs.length, 2);
});

test("a missing key is 400 where required; a route can make it optional or generate one", async (t) => {
  const app = await start(t);
  const missing = await post(`${app.url}/api/exports`);
  assert.equal(missing.status, 400);
  assert.equal(errorOf(missing).code, "IDEMPOTENCY_KEY_REQUIRED");
  assert.equal(app.runs.length, 0);

  const optional = await start(t, { options: { required: false } });
  await post(`${optional.url}/api/exports`);
  await post(`${optional.url}/api/exports`);
  assert.equal(optional.runs.length, 2);

  const generating = await start(t, { options: { required: "generate" } });
  const g = await post(`${generating.url}/api/exports`);
  const key = g.headers.get("idempotency-key");
  assert.match(key, /^[0-9a-f-]{36}$/);
  assert.equal(JSON.parse(g.text).key, key);
  const retried = await post(`${generating.url}/api/exports`, { key });
  assert.equal(retried.headers.get("idempotent-replayed"), "true");
  const { rows } = await db.pool.query("SELECT headers::text AS h FROM onceq_request_ledger WHERE key = $1", [key]);
  assert.ok(!rows[0].h.includes("idempotency-key"), "the echo of a generated key is not recorded");
});

test("a malformed or repeated key is 400 IDEMPOTENCY_KEY_INVALID", async (t) => {
  const app = await start(t);
  for (const key of ["a b", "k".repeat(256), "caf\u00e9"]) {
    const res = await post(`${app.url}/api/exports`, { key });
    assert.equal(res.status, 400, JSON.stringify(key));
    assert.equal(errorOf(res).code, "IDEMPOTENCY_KEY_INVALID");
  }
  assert.equal((await post(`${app.url}/api/exports`, { key: "k".repeat(255) })).status, 202);
  const repeated = await new Promise((resolve, reject) => {
    const req = http.request(`${app.url}/api/exports`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": ["a", "b"] },
    });
    req.on("response", (res) => {
      let text = "";
      res.on("data", (d) => (text += d)).on("end", () => resolve({ status: res.statusCode, text }));
    });
    req.on("error", reject);
    req.end("{}");
  });
  assert.equal(repeated.status, 400);
  assert.match(errorOf(repeated).message, /exactly one/);
  assert.equal(app.runs.length, 1);
});

test("a streamed answer is recorded whole and replayed", async (t) => {
  const app = await start(t);
  const first = await post(`${app.url}/api/stream`, { key: "k" });
  const again = await post(`${app.url}/api/stream`, { key: "k" });
  assert.equal(first.text, "chunk-1 chunk-2 run 1");
  assert.equal(again.text, first.text);
  assert.equal(again.headers.get("content-type"), "text/plain; charset=utf-8");
  assert.equal(again.headers.get("idempotent-replayed"), "true");
  assert.equal(app.runs.length, 1);
});

test("an answer over maxResponseBody is sent but not recorded", async (t) => {
  const app = await start(t, { options: { maxResponseBody: 10 } });
  assert.equal((await post(`${app.url}/api/stream`, { key: "k" })).text, "chunk-1 chunk-2 run 1");
  assert.equal((await post(`${app.url}/api/stream`, { key: "k" })).text, "chunk-1 chunk-2 run 2");
});

test("a body over maxBody is 413; invalid JSON is 400; neither is claimed", async (t) => {
  const app = await start(t, { options: { maxBody: 16 } });
  const big = await post(`${app.url}/api/exports`, { key: "k", body: JSON.stringify({ pad: "x".repeat(32) }) });
  assert.equal(big.status, 413);
  assert.equal(errorOf(big).code, "PAYLOAD_TOO_LARGE");
  const bad = await post(`${app.url}/api/exports`, { key: "k", body: '{"a":' });
  assert.equal(bad.status, 400);
  assert.equal(errorOf(bad).code, "BODY_INVALID_JSON");
  assert.equal(app.runs.length, 0);
  assert.equal((await post(`${app.url}/api/exports`, { key: "k", body: '{"a":1}' })).status, 202);
});

test("after express.json(), keepRawBody keeps the bytes the fingerprint needs", async (t) => {
  const clock = testClock();
  for (const verify of [undefined, keepRawBody]) {
    const runs = [];
    const app = express();
    app.use(express.json(verify ? { verify } : {}));
    app.post("/x", idempotency({ pool: db.pool, now: clock.now }), (req, res) => {
      runs.push(req.body);
      res.json({ n: req.body.n });
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    t.after(() => server.close());
    const url = `http://127.0.0.1:${server.address().port}/x`;
    const key = `parsed-${Boolean(verify)}`;
    assert.equal((await post(url, { key, body: '{"n": 1, "m": 2}' })).status, 200);
    assert.equal((await post(url, { key, body: '{"m":2,"n":1}' })).headers.get("idempotent-replayed"), "true");
    // 1.0 and 1 are different requests to serde_json; only the bytes can tell.
    const other = await post(url, { key, body: '{"n": 1.0, "m": 2}' });
    assert.equal(other.status, verify ? 422 : 200);
    assert.equal(runs.length, 1);
  }
});

test("a failing ledger is 503 LEDGER_UNAVAILABLE with Retry-After, never in flight", async (t) => {
  // A pool on a schema without the ledger's table: every claim errors.
  const broken = new pg.Pool({ connectionString: process.env.DATABASE_URL, options: "-c search_path=no_such_schema" });
  t.after(() => broken.end());
  const runs = [];
  const app = express();
  app.post("/x", idempotency({ pool: broken, log: () => {} }), (_req, res) => {
    runs.push(1);
    res.json({});
  });
  const server = app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  t.after(() => server.close());
  const res = await post(`http://127.0.0.1:${server.address().port}/x`, { key: "k" });
  assert.equal(res.status, 503);
  assert.equal(errorOf(res).code, "LEDGER_UNAVAILABLE");
  assert.equal(res.headers.get("retry-after"), "1");
  assert.equal(runs.length, 0);
});

test("GET passes through without a key", async (t) => {
  const app = express();
  let n = 0;
  app.get("/x", idempotency({ pool: db.pool }), (_req, res) => res.json({ n: ++n }));
  const server = app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  t.after(() => server.close());
  const url = `http://127.0.0.1:${server.address().port}/x`;
  assert.equal((await fetch(url)).status, 200);
  assert.equal(await (await fetch(url)).text(), '{"n":2}');
});

test("the purger deletes expired entries and stops cleanly", async (t) => {
  const clock = testClock();
  const app = await start(t, { clock, options: { retentionMs: 60_000 } });
  await post(`${app.url}/api/exports`, { key: "old" });
  clock.advance(61_000);
  await post(`${app.url}/api/exports`, { key: "new" });
  const purger = startPurger({ pool: db.pool, every: 3_600_000, now: clock.now });
  await purger.stop(); // waits for the first pass, started at once
  const { rows } = await db.pool.query("SELECT key FROM onceq_request_ledger");
  assert.deepEqual(rows.map((r) => r.key), ["new"]);
  clock.advance(61_000);
  assert.equal(await purger.runOnce(), 1);
  await purger.stop();
});

test("migrate where the tables exist takes no lock on them: a process start never waits behind a write in flight", async () => {
  const fresh = `ledger_w_${process.pid}`;
  const admin = new pg.Pool({ connectionString: process.env.DATABASE_URL });
  await admin.query(`DROP SCHEMA IF EXISTS ${fresh} CASCADE; CREATE SCHEMA ${fresh}`);
  const options = `-c search_path=${fresh}`;
  const first = new pg.Pool({ connectionString: process.env.DATABASE_URL, options });
  // The next process's connection: a wait for a table lock fails instead of hanging.
  const next = new pg.Pool({ connectionString: process.env.DATABASE_URL, options: `${options} -c lock_timeout=10s`, max: 1 });
  const writer = await first.connect();
  try {
    await migrateAll(first);
    const { rows } = await admin.query("SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND indexname = $2", [
      fresh,
      "onceq_request_ledger_expires_at",
    ]);
    assert.equal(rows.length, 1, "the purge's index is made in the ledger's own schema");
    // A write in flight on each table (what an INSERT holds, until COMMIT).
    await writer.query("BEGIN");
    await writer.query("LOCK TABLE onceq_request_ledger, onceq_job_facts IN ROW EXCLUSIVE MODE");
    await migrateAll(next);
  } finally {
    await writer.query("ROLLBACK").catch(() => {});
    writer.release();
    await Promise.all([first.end(), next.end()]);
    await admin.query(`DROP SCHEMA ${fresh} CASCADE`);
    await admin.end();
  }
});

test("migrate is safe when many processes start at once", async () => {
  const fresh = `ledger_m_${process.pid}`;
  const admin = new pg.Pool({ connectionString: process.env.DATABASE_URL });
  await admin.query(`DROP SCHEMA IF EXISTS ${fresh} CASCADE; CREATE SCHEMA ${fresh}`);
  const pools = Array.from({ length: 6 }, () => new pg.Pool({ connectionString: process.env.DATABASE_URL, options: `-c search_path=${fresh}` }));
  try {
    await Promise.all(pools.map((p) => migrate(p)));
    const { rows } = await admin.query("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = $1", [fresh]);
    assert.equal(rows[0].n, 1);
  } finally {
    await Promise.all(pools.map((p) => p.end()));
    await admin.query(`DROP SCHEMA ${fresh} CASCADE`);
    await admin.end();
  }
});
