// Plays the seed document's story against a running onceq server, using the
// seed's route.mjs and worker.mjs verbatim except for their BASE line and
// the route's port (copied into ./.work/ by the Rust test that runs this).
//
// Env: ONCEQ_BASE (http://127.0.0.1:PORT), INFRAI_API_KEY, DATABASE_URL
// (the app's own database), ROUTE_PORT.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import pg from "pg";

const BASE = process.env.ONCEQ_BASE;
const KEY = process.env.INFRAI_API_KEY;
const ROUTE = `http://127.0.0.1:${process.env.ROUTE_PORT}`;
const QUEUE = "api-enqueue-jobs";
const H = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
const schema = await readFile(new URL("./.work/schema.sql", import.meta.url), "utf8");
await pool.query(schema);

const step = (s) => console.log(`compat: ${s}`);

async function waitForRoute() {
  for (let i = 0; i < 100; i++) {
    try {
      await fetch(`${ROUTE}/`);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error("route never listened");
}

async function exportRequest(idem, body) {
  const r = await fetch(`${ROUTE}/api/exports`, {
    method: "POST",
    headers: { "Idempotency-Key": idem, "Content-Type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: r.status, body: await r.json() };
}

async function stats() {
  const r = await fetch(`${BASE}/v1/queue/stats/${QUEUE}`, { headers: H });
  assert.equal(r.status, 200);
  return (await r.json()).data;
}

await import("./.work/route.mjs");
await waitForRoute();

// 1. Two POSTs with the same Idempotency-Key: one job, the same message_id.
const first = await exportRequest("exp_2026_07_26_acme", { tenant: "acme", format: "csv" });
const second = await exportRequest("exp_2026_07_26_acme", { tenant: "acme", format: "csv" });
assert.equal(first.status, 202, JSON.stringify(first.body));
assert.equal(first.body.status, "queued");
assert.match(first.body.message_id, /^qmsg_/);
assert.equal(second.status, 202);
assert.deepEqual(second.body, first.body);
step(`two POSTs, one message ${first.body.message_id}`);

// 2. The publish key on its own: the same key twice is one message, and
// onceq says it was a replay (the hosted service did not).
const pub = (payload, key) =>
  fetch(`${BASE}/v1/queue/publish`, {
    method: "POST",
    headers: H,
    body: JSON.stringify({ queue: QUEUE, payload, idempotency_key: key }),
  }).then(async (r) => ({ status: r.status, json: await r.json() }));
const probeA = await pub({ job: "export", tenant: "acme" }, "req_probe_abc123");
const probeB = await pub({ job: "export", tenant: "acme" }, "req_probe_abc123");
assert.equal(probeA.json.data.message_id, probeB.json.data.message_id);
assert.equal(probeA.json.metadata.idempotent_replay, false);
assert.equal(probeB.json.metadata.idempotent_replay, true);
let s = await stats();
assert.equal(s.message_count, 2, JSON.stringify(s)); // the export + the probe
step(`publish key dedupes (replay flag true), message_count ${s.message_count}`);

// drop the probe so the story's count matches the seed's
const consumed = await fetch(`${BASE}/v1/queue/consume`, {
  method: "POST", headers: H, body: JSON.stringify({ queue: QUEUE, max_messages: 10 }),
}).then((r) => r.json());
for (const m of consumed.data.items) {
  if (m.message_id === probeA.json.data.message_id) {
    await fetch(`${BASE}/v1/queue/ack`, { method: "POST", headers: H, body: JSON.stringify({ queue: QUEUE, message_id: m.message_id }) });
  } else {
    await fetch(`${BASE}/v1/queue/nack`, { method: "POST", headers: H, body: JSON.stringify({ queue: QUEUE, message_id: m.message_id, requeue: true }) });
  }
}
s = await stats();
assert.equal(s.message_count, 1, JSON.stringify(s));
step("stats: message_count 1");

// 3. The worker's tick drains it; job_results holds one row.
const { tick } = await import("./.work/worker.mjs");
await tick();
s = await stats();
assert.equal(s.message_count, 0, JSON.stringify(s));
const facts = await pool.query("SELECT job_fact FROM job_results");
assert.deepEqual(facts.rows.map((r) => r.job_fact), ["export:exp_2026_07_26_acme"]);
step("worker tick drained the queue; job_results has one row");

// 4. A publish over 256 KB fails with QUEUE_MESSAGE_TOO_LARGE ...
const big = await pub({ blob: "x".repeat(300 * 1024) }, "too-big");
assert.equal(big.status, 413);
assert.equal(big.json.error.code, "QUEUE_MESSAGE_TOO_LARGE");
assert.equal(big.json.ok, false);
// ... also through the route: a body just under express's 256kb limit
// plus the route's job_fact is over the queue's limit; the route deletes
// its ledger claim and answers 503, and nothing is queued.
const filler = "y".repeat(262144 - 40);
const viaRoute = await exportRequest("exp_big", { tenant: "acme", format: filler });
assert.equal(viaRoute.status, 503, JSON.stringify(viaRoute.body).slice(0, 200));
assert.match(viaRoute.body.error, /QUEUE_MESSAGE_TOO_LARGE/);
const ledger = await pool.query("SELECT count(*)::int AS n FROM api_requests WHERE idempotency_key = 'exp_big'");
assert.equal(ledger.rows[0].n, 0);
s = await stats();
assert.equal(s.message_count, 0);
step("over 256 KB: QUEUE_MESSAGE_TOO_LARGE, nothing stored");

await pool.end();
console.log("compat: seed story passed");
process.exit(0);
