// The Hono middleware (the same core as Express) over real HTTP: a Hono
// app served by @hono/node-server on 127.0.0.1:0, on a real PostgreSQL.
import assert from "node:assert/strict";
import { after, before, beforeEach, test } from "node:test";

import { serve } from "@hono/node-server";
import { Hono } from "hono";

import { idempotency } from "../dist/hono.js";
import { errorOf, freshLedgerPool, gate, post, testClock } from "./ledger-support.mjs";

let db;
before(async () => {
  db = await freshLedgerPool();
});
after(() => db.close());
beforeEach(() => db.pool.query("TRUNCATE onceq_request_ledger"));

async function start(t, { name = "a", clock = testClock(), options = {}, hooks = {} } = {}) {
  const runs = [];
  const app = new Hono();
  // Mounted for every route: the handler's route template still scopes keys.
  app.use("/api/*", idempotency({ pool: db.pool, now: clock.now, log: () => {}, ...options }));
  app.post("/api/exports/:tenant", async (c) => {
    const body = await c.req.json();
    runs.push(body);
    if (hooks.entered) hooks.entered();
    if (hooks.wait) await hooks.wait;
    const status = hooks.status ? hooks.status() : 202;
    c.header("x-run", String(runs.length));
    return c.json({ by: name, run: runs.length, key: c.get("idempotencyKey"), body }, status);
  });
  app.post("/api/other", (c) => {
    runs.push("other");
    return c.json({ route: "other" }, 201);
  });
  app.post("/api/big", (c) => {
    runs.push("big");
    return c.text(`${"x".repeat(100)} run ${runs.length}`);
  });
  app.post("/api/throws", () => {
    runs.push("throws");
    throw new Error("boom");
  });
  app.onError((_e, c) => c.json({ error: { code: "INTERNAL" } }, 500));
  const server = await new Promise((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, () => resolve(s));
  });
  t.after(() => {
    server.closeAllConnections?.();
    return new Promise((r) => server.close(r));
  });
  return { url: `http://127.0.0.1:${server.address().port}`, runs, clock };
}

test("hono: a double tap runs once and answers the same twice; another body is 422", async (t) => {
  const app = await start(t);
  const first = await post(`${app.url}/api/exports/acme`, { key: "k", body: '{"a":1,"b":2}' });
  const second = await post(`${app.url}/api/exports/acme`, { key: "k", body: '{"b":2, "a":1}' });
  assert.equal(first.status, 202);
  assert.equal(second.status, 202);
  assert.equal(second.text, first.text);
  assert.equal(second.headers.get("x-run"), "1");
  assert.equal(second.headers.get("idempotent-replayed"), "true");
  assert.equal(JSON.parse(first.text).key, "k");
  const other = await post(`${app.url}/api/exports/acme`, { key: "k", body: '{"a":2}' });
  assert.equal(other.status, 422);
  assert.equal(errorOf(other).code, "IDEMPOTENCY_KEY_REUSED");
  assert.equal(app.runs.length, 1);
});

test("hono: keys are scoped by route template and caller", async (t) => {
  const app = await start(t);
  await post(`${app.url}/api/exports/acme`, { key: "k" });
  // Another URL of the same route is the same route: a replay.
  const sameRoute = await post(`${app.url}/api/exports/globex`, { key: "k" });
  assert.equal(sameRoute.headers.get("idempotent-replayed"), "true");
  assert.equal((await post(`${app.url}/api/other`, { key: "k" })).status, 201);
  const bob = await post(`${app.url}/api/exports/acme`, { key: "k", headers: { authorization: "Bearer bob" } });
  assert.equal(bob.headers.get("idempotent-replayed"), null);
  assert.equal(app.runs.length, 3);
});

test("hono: in flight is 409 with Retry-After; a crashed holder is taken over after its lease", async (t) => {
  const clock = testClock();
  const stuck = gate();
  const entered = gate();
  const a = await start(t, { name: "a", clock, hooks: { wait: stuck.opened, entered: entered.open } });
  const b = await start(t, { name: "b", clock });
  const abandoned = post(`${a.url}/api/exports/acme`, { key: "k" });
  await entered.opened;
  clock.advance(5_000);
  const during = await post(`${b.url}/api/exports/acme`, { key: "k" });
  assert.equal(during.status, 409);
  assert.equal(errorOf(during).code, "REQUEST_IN_FLIGHT");
  assert.equal(during.headers.get("retry-after"), "25");
  clock.advance(25_000);
  const takeover = await post(`${b.url}/api/exports/acme`, { key: "k" });
  assert.equal(JSON.parse(takeover.text).by, "b");
  stuck.open();
  await abandoned;
  assert.equal(JSON.parse((await post(`${a.url}/api/exports/acme`, { key: "k" })).text).by, "b");
});

test("hono: a 5xx and a thrown handler are not recorded; the retry runs again", async (t) => {
  let fail = true;
  const app = await start(t, { hooks: { status: () => (fail ? 503 : 202) } });
  assert.equal((await post(`${app.url}/api/exports/acme`, { key: "k" })).status, 503);
  fail = false;
  assert.equal((await post(`${app.url}/api/exports/acme`, { key: "k" })).headers.get("idempotent-replayed"), null);
  assert.equal(app.runs.length, 2);
  assert.equal((await post(`${app.url}/api/throws`, { key: "t" })).status, 500);
  assert.equal((await post(`${app.url}/api/throws`, { key: "t" })).status, 500);
  assert.equal(app.runs.filter((r) => r === "throws").length, 2);
});

test("hono: a missing key is 400 where required", async (t) => {
  const app = await start(t);
  const missing = await post(`${app.url}/api/exports/acme`);
  assert.equal(missing.status, 400);
  assert.equal(errorOf(missing).code, "IDEMPOTENCY_KEY_REQUIRED");
  assert.equal(app.runs.length, 0);
});

test("hono: an answer over maxResponseBody is sent whole but not recorded", async (t) => {
  const app = await start(t, { options: { maxResponseBody: 10 } });
  assert.equal((await post(`${app.url}/api/big`, { key: "k" })).text, `${"x".repeat(100)} run 1`);
  const again = await post(`${app.url}/api/big`, { key: "k" });
  assert.equal(again.text, `${"x".repeat(100)} run 2`);
  assert.equal(again.headers.get("idempotent-replayed"), null);
});
