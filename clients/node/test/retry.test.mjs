// Publish and keyed calls are retried with the same idempotency key on
// network errors, 5xx and 429 (Retry-After honoured), a bounded number of
// times; other calls and other errors are not. The faults come from a tiny
// proxy in front of the real server.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import test from "node:test";

import { OnceqError } from "../dist/index.js";
import { client, errorBody, freePort, ONCEQ_URL, proxy, queueName } from "../test-support/env.mjs";

const fast = { baseDelayMs: 1, maxDelayMs: 5 };
const c = client();
const publishes = (p) => p.seen.filter((r) => r.path === "/v1/queue/publish");

test("publish through two 503s: retried with the same key, one message stored", async () => {
  const p = await proxy(ONCEQ_URL, (req, n) => (n <= 2 ? errorBody("UNAVAILABLE", "database down", 503) : null));
  try {
    const q = queueName("r503");
    const via = client({ baseUrl: p.url, retry: fast });
    const out = await via.publish(q, { job: 1 });
    assert.equal(out.replay, false);
    const keys = publishes(p).map((r) => JSON.parse(r.body).idempotency_key);
    assert.equal(keys.length, 3);
    assert.ok(keys.every((k) => k === out.idempotencyKey), `one key on every try: ${keys}`);
    assert.equal((await c.stats(q)).message_count, 1);
  } finally {
    await p.close();
  }
});

test("publish whose answer is lost after the server stored it: the retry is a replay of the same message", async () => {
  const p = await proxy(ONCEQ_URL, (req, n) => (n === 1 ? "forward-then-drop" : null));
  try {
    const q = queueName("rlost");
    const via = client({ baseUrl: p.url, retry: fast });
    const out = await via.publish(q, { job: 2 });
    assert.equal(publishes(p).length, 2);
    assert.equal(out.replay, true, "the first try had stored it");
    assert.equal((await c.stats(q)).message_count, 1);
  } finally {
    await p.close();
  }
});

test("publish to a server not listening yet: connection refused is retried until it is up", async () => {
  const port = await freePort();
  let p;
  const errors = [];
  const via = client({
    baseUrl: `http://127.0.0.1:${port}`,
    retry: {
      ...fast,
      onRetry: async ({ error }) => {
        errors.push(error.code);
        p ??= await proxy(ONCEQ_URL, () => null, port);
      },
    },
  });
  try {
    const q = queueName("rrefused");
    const out = await via.publish(q, { job: 3 }, { idempotencyKey: randomUUID() });
    assert.deepEqual(errors, ["NETWORK_ERROR"]);
    assert.equal(publishes(p).length, 1);
    assert.equal(JSON.parse(publishes(p)[0].body).idempotency_key, out.idempotencyKey);
    assert.equal((await c.stats(q)).message_count, 1);
  } finally {
    await p?.close();
  }
});

test("429 with Retry-After: the retry waits at least that long", async () => {
  const p = await proxy(ONCEQ_URL, (req, n) =>
    n === 1 ? { ...errorBody("RATE_LIMITED", "slow down", 429), headers: { "retry-after": "1" } } : null,
  );
  try {
    const delays = [];
    const via = client({ baseUrl: p.url, retry: { ...fast, onRetry: ({ delayMs }) => void delays.push(delayMs) } });
    await via.publish(queueName("r429"), { job: 4 });
    assert.equal(delays.length, 1);
    assert.ok(delays[0] >= 1000, `waited ${delays[0]} ms`);
  } finally {
    await p.close();
  }
});

test("attempts are bounded; a 4xx is not retried; an unkeyed ack is not retried; a keyed call is", async () => {
  let mode = "503";
  const p = await proxy(ONCEQ_URL, (req) => {
    if (req.path === "/v1/discovery") return null;
    if (mode === "503") return errorBody("UNAVAILABLE", "down", 503);
    if (mode === "400") return errorBody("INVALID_PARAMS", "payload: bad", 400);
    if (mode === "once" && !p.failed) {
      p.failed = true;
      return errorBody("UNAVAILABLE", "down", 503);
    }
    return null;
  });
  try {
    const via = client({ baseUrl: p.url, retry: { ...fast, maxAttempts: 3 } });
    const q = queueName("rbound");
    const e1 = await via.publish(q, {}).catch((e) => e);
    assert.ok(e1 instanceof OnceqError && e1.code === "UNAVAILABLE" && e1.retryable && e1.status === 503);
    assert.equal(p.seen.length, 3, "three attempts in all");

    mode = "400";
    p.seen.length = 0;
    const e2 = await via.publish(q, {}).catch((e) => e);
    assert.equal(e2.code, "INVALID_PARAMS");
    assert.equal(p.seen.length, 1, "a refusal is final");

    mode = "503";
    p.seen.length = 0;
    await assert.rejects(via.ack(q, "qmsg_x", "r"), (e) => e.code === "UNAVAILABLE");
    assert.equal(p.seen.length, 1, "an ack without a key is sent once");

    mode = "once";
    p.seen.length = 0;
    const key = randomUUID();
    const rec = await via.withIdempotencyKey(key).createQueue({ name: q });
    assert.equal(rec.name, q);
    assert.equal(p.seen.length, 2);
    assert.ok(p.seen.every((r) => r.headers["idempotency-key"] === key));
  } finally {
    await p.close();
  }
});
