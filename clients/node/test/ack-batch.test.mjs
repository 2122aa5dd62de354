// Batch acks: `ackBatch` uses the server's POST /v1/queue/ack_batch when
// /v1/discovery lists it, and single acks when it does not; either way the
// answer says, entry by entry, which were acked.
import assert from "node:assert/strict";
import test from "node:test";

import { client, ONCEQ_URL, proxy, queueName } from "../test-support/env.mjs";

const c = client();

async function threeInFlight(q) {
  for (let i = 0; i < 3; i++) await c.publish(q, { i });
  const got = await c.consume(q, { maxMessages: 3 });
  assert.equal(got.length, 3);
  return got;
}

function check(result, got) {
  assert.deepEqual(result.successful.map((s) => s.message_id).sort(), [got[0].message_id, got[1].message_id].sort());
  assert.equal(result.failed.length, 1);
  assert.equal(result.failed[0].message_id, got[2].message_id);
  assert.equal(result.failed[0].code, "LEASE_NOT_HELD", "the server's code for a lease not held");
}

test("ackBatch takes the batch path when the server lists ack_batch, else the single-ack fallback", async () => {
  const offered = (await c.discovery()).capabilities.some((x) => x.path === "/v1/queue/ack_batch");
  assert.equal((await c.features()).ackBatch, offered);
  const p = await proxy(ONCEQ_URL);
  try {
    const via = client({ baseUrl: p.url });
    const q = queueName("ackb");
    const got = await threeInFlight(q);
    const r = await via.ackBatch(q, [
      { message_id: got[0].message_id, receipt: got[0].receipt },
      { message_id: got[1].message_id, receipt: got[1].receipt, result: { ok: true } },
      { message_id: got[2].message_id, receipt: "not-the-receipt" },
    ]);
    check(r, got);
    const calls = p.seen.filter((x) => x.path.startsWith("/v1/queue/ack"));
    if (offered) {
      assert.equal(r.batched, true, "the server offers ack_batch: it must be used");
      assert.deepEqual(calls.map((x) => x.path), ["/v1/queue/ack_batch"]);
    } else {
      assert.equal(r.batched, false, "the server lacks ack_batch: the fallback must be used");
      assert.deepEqual(calls.map((x) => x.path), ["/v1/queue/ack", "/v1/queue/ack", "/v1/queue/ack"]);
    }
    const s = await c.stats(q);
    assert.equal(s.in_flight, 1, "the wrong receipt's message is still held");
  } finally {
    await p.close();
  }
});

test("ackBatch falls back to single acks against a server whose discovery lacks ack_batch", async () => {
  // Whatever this server offers, a proxy that hides ack_batch from its
  // discovery stands for an older server.
  const p = await proxy(ONCEQ_URL, async (req) => {
    if (req.path !== "/v1/discovery") return null;
    const d = await (await fetch(ONCEQ_URL + "/v1/discovery")).json();
    d.data.capabilities = d.data.capabilities.filter((x) => x.path !== "/v1/queue/ack_batch");
    return { status: 200, body: JSON.stringify(d) };
  });
  try {
    const via = client({ baseUrl: p.url });
    const q = queueName("ackf");
    const got = await threeInFlight(q);
    const r = await via.ackBatch(q, [
      { message_id: got[0].message_id, receipt: got[0].receipt },
      { message_id: got[1].message_id, receipt: got[1].receipt },
      { message_id: got[2].message_id, receipt: "not-the-receipt" },
    ]);
    assert.equal(r.batched, false);
    check(r, got);
    assert.equal(p.seen.filter((x) => x.path === "/v1/queue/ack_batch").length, 0);
    assert.equal(p.seen.filter((x) => x.path === "/v1/queue/ack").length, 3);
    const { items, acks } = await via.consumeWithAcks(q, []);
    assert.deepEqual(items, []);
    assert.equal(acks.successful.length, 0);
  } finally {
    await p.close();
  }
});

test("consumeWithAcks puts the acks on the consume where the server takes them, else acks first", async () => {
  const { consumeAcks, ackBatch } = await c.features();
  const p = await proxy(ONCEQ_URL);
  try {
    const via = client({ baseUrl: p.url });
    const q = queueName("acons");
    const got = await threeInFlight(q);
    await c.publish(q, { next: true });
    const { items, acks } = await via.consumeWithAcks(
      q,
      got.slice(0, 2).map((m) => ({ message_id: m.message_id, receipt: m.receipt })),
    );
    assert.deepEqual(items.map((m) => m.payload), [{ next: true }]);
    assert.equal(acks.successful.length, 2);
    const calls = p.seen.filter((x) => x.path.startsWith("/v1/queue/")).map((x) => x.path);
    if (consumeAcks) {
      assert.deepEqual(calls, ["/v1/queue/consume"], "one call carried the acks and the consume");
      assert.equal(JSON.parse(p.seen.at(-1).body).acks.length, 2);
    } else if (ackBatch) {
      assert.deepEqual(calls, ["/v1/queue/ack_batch", "/v1/queue/consume"]);
    } else {
      assert.deepEqual(calls, ["/v1/queue/ack", "/v1/queue/ack", "/v1/queue/consume"]);
    }
    assert.equal((await c.stats(q)).in_flight, 2, "the third of the first three, and the new one");
  } finally {
    await p.close();
  }
});
