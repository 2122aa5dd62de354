// The client against the real server: every endpoint family, the error
// class, and the long poll an AbortSignal cancels.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import test from "node:test";

import { OnceqError } from "../dist/index.js";
import { client, eventually, longPollsWaiting, queueName } from "../test-support/env.mjs";

const c = client();

test("queues: create, get, list, update, stats, pause, resume, purge, delete", async () => {
  const q = queueName("crud");
  const created = await c.createQueue({ name: q, max_retries: 2 });
  assert.equal(created.name, q);
  assert.equal((await c.getQueue(q)).max_retries, 2);
  assert.ok((await c.listQueues()).some((r) => r.name === q));
  const updated = await c.updateQueue({
    name: q,
    retry_backoff: { initial_seconds: 5, max_seconds: 60, multiplier: 2, jitter: 0 },
  });
  assert.equal(updated.retry_backoff?.initial_seconds, 5);
  await c.publish(q, { n: 1 });
  assert.equal((await c.stats(q)).available, 1);
  assert.equal((await c.pause(q)).paused, true);
  assert.deepEqual(await c.consume(q), [], "a paused queue hands out nothing");
  assert.equal((await c.resume(q)).paused, false);
  assert.equal(await c.purge(q), 1);
  assert.equal((await c.stats(q)).message_count, 0);
  assert.equal((await c.deleteQueue(q)).deleted, true);
  await assert.rejects(c.getQueue(q), (e) => e instanceof OnceqError && e.code === "QUEUE_NOT_FOUND" && e.status === 404);
});

test("publish: same key → one message and a replay; another payload → 422 OnceqError with hint and request id", async () => {
  const q = queueName("pub");
  const key = randomUUID();
  const first = await c.publish(q, { a: 1 }, { idempotencyKey: key, headers: { "X-Tenant": "t1" } });
  assert.equal(first.replay, false);
  assert.equal(first.idempotencyKey, key);
  assert.match(first.message.message_id, /^qmsg_/);
  assert.equal(first.message.headers?.["x-tenant"], "t1");
  const again = await c.publish(q, { a: 1 }, { idempotencyKey: key });
  assert.equal(again.replay, true);
  assert.equal(again.message.message_id, first.message.message_id);
  const err = await c.publish(q, { a: 2 }, { idempotencyKey: key }).catch((e) => e);
  assert.ok(err instanceof OnceqError);
  assert.equal(err.code, "IDEMPOTENCY_KEY_REUSED");
  assert.equal(err.status, 422);
  assert.equal(err.retryable, false);
  assert.ok(err.hint && err.hint.length > 0, "the server's hint is kept");
  assert.ok(err.requestId, "the server's request id is kept");
  // A generated key still makes a publish retry-safe: every call gets its own.
  const a = await c.publish(q, { b: 1 });
  const b = await c.publish(q, { b: 1 });
  assert.notEqual(a.idempotencyKey, b.idempotencyKey);
  assert.equal((await c.stats(q)).available, 3);
});

test("bad input is refused with the field named; the client refuses a bad queue name before sending", async () => {
  const err = await c.consume(queueName("bad"), { maxMessages: 11 }).catch((e) => e);
  assert.ok(err instanceof OnceqError);
  assert.equal(err.code, "INVALID_PARAMS");
  assert.equal(err.status, 400);
  assert.match(err.message, /max_messages/);
  const local = await c.publish("no spaces allowed", {}).catch((e) => e);
  assert.equal(local.code, "INVALID_ARGUMENT");
  assert.equal(local.status, 0);
});

test("publishBatch, consume, extend, ack with result, nack with error, message detail", async () => {
  const q = queueName("life");
  await c.createQueue({ name: q, completed_retention_seconds: 600 });
  const items = await c.publishBatch(q, [
    { payload: { i: 1 }, idempotency_key: "k1" },
    { payload: { i: 2 }, idempotency_key: "k2" },
  ]);
  assert.equal(items.length, 2);
  const [m1, m2] = await c.consume(q, { maxMessages: 2, visibilityTimeout: 30 });
  assert.ok(m1 && m2);
  assert.equal(m1.delivery_count, 1);
  const ext = await c.extend(q, m1.message_id, m1.receipt, 60);
  assert.equal(ext.extended, true);
  assert.equal(await c.ack(q, m1.message_id, m1.receipt, { result: { rows: 3 } }), true);
  assert.equal(await c.ack(q, m1.message_id, m1.receipt), false, "a second ack finds nothing in flight");
  const done = await c.getMessage(q, m1.message_id);
  assert.equal(done.state, "completed");
  assert.deepEqual(done.result, { rows: 3 });
  const n = await c.nack(q, m2.message_id, { receipt: m2.receipt, error: "disk full", delaySeconds: 100 });
  assert.equal(n.nacked, true);
  const failed = await c.getMessage(q, m2.message_id);
  assert.equal(failed.state, "delayed");
  assert.equal(failed.last_error, "disk full");
  assert.equal(await c.cancel(q, m2.message_id), true);
});

test("dead letters: nack without requeue, redrive by id", async () => {
  const q = queueName("dlq");
  const { message } = await c.publish(q, { x: 1 });
  const [m] = await c.consume(q);
  const n = await c.nack(q, m.message_id, { receipt: m.receipt, requeue: false, error: "poison" });
  assert.equal(n.dead_lettered, true);
  assert.equal((await c.stats(q)).dead_lettered, 1);
  const r = await c.redrive(q, { messageIds: [message.message_id] });
  assert.equal(r.redriven, 1);
  assert.equal((await c.stats(q)).available, 1);
});

test("a keyed call answers once: a repeat is a replay, the same effect", async () => {
  const q = queueName("keyed");
  await c.publish(q, { x: 1 });
  const once = c.withIdempotencyKey(randomUUID());
  assert.equal(await once.purge(q), 1);
  await c.publish(q, { x: 2 });
  assert.equal(await once.purge(q), 1, "the repeat answers what the first answered");
  assert.equal((await c.stats(q)).available, 1, "and purges nothing more");
});

test("discovery, capability, account balance and usage", async () => {
  const d = await c.discovery();
  assert.ok(d.capabilities.some((x) => x.id === "queue.publish" && x.path === "/v1/queue/publish"));
  assert.equal((await c.capability("queue.consume")).path, "/v1/queue/consume");
  await assert.rejects(c.capability("no.such.thing"), (e) => e instanceof OnceqError && e.status === 404);
  assert.equal(typeof (await c.balance()).currency, "string");
  const u = await c.usage({ from: "2020-01-01T00:00:00Z" });
  assert.ok(Array.isArray(u.items));
});

test("cron: create (idempotent), list, get, update, pause, resume, delete", async () => {
  const q = queueName("cron");
  await c.createQueue({ name: q });
  const key = randomUUID();
  const { job, replay } = await c.cronCreate({ cron_expr: "0 3 * * *", queue: q, payload: { r: 1 }, idempotency_key: key });
  assert.equal(replay, false);
  assert.equal((await c.cronCreate({ cron_expr: "0 3 * * *", queue: q, payload: { r: 1 }, idempotency_key: key })).replay, true);
  assert.ok((await c.cronList()).some((j) => j.job_id === job.job_id));
  assert.equal((await c.cronGet(job.job_id)).queue, q);
  assert.equal((await c.cronUpdate({ job_id: job.job_id, cron_expr: "0 4 * * *" })).cron_expr, "0 4 * * *");
  assert.equal((await c.cronPause(job.job_id)).paused, true);
  assert.equal((await c.cronResume(job.job_id)).paused, false);
  assert.equal((await c.cronDelete(job.job_id)).deleted, true);
  await assert.rejects(c.cronCreate({ cron_expr: "not a cron", queue: q }), (e) => e.code === "INVALID_PARAMS");
});

test("webhooks and push subscriptions: register, list, deliveries, delete", async () => {
  const hook = await c.registerWebhook({ url: "https://hooks.example.com/onceq", events: ["message.dead_lettered"] });
  assert.match(hook.secret ?? "", /^whsec_/);
  assert.ok((await c.listWebhooks()).some((h) => h.id === hook.id));
  assert.ok(Array.isArray(await c.webhookDeliveries(hook.id, 5)));
  assert.equal((await c.deleteWebhook(hook.id)).deleted, true);
  const q = queueName("push");
  await c.createQueue({ name: q });
  const sub = await c.pushSubscribe(q, { url: "https://hooks.example.com/push" });
  assert.ok((await c.pushSubscriptions(q)).some((s) => s.subscription_id === sub.subscription_id));
  assert.equal((await c.pushUnsubscribe(q, sub.subscription_id)).deleted, true);
});

test("admin: keys and projects", async () => {
  const created = await c.adminKeysCreate({ project: "default", label: "node-test", actions: "full" });
  assert.ok(created.secret);
  const keyId = created.key.key_id;
  assert.ok((await c.adminKeys()).some((k) => k.key_id === keyId));
  assert.equal((await c.adminKeysLimits({ key_id: keyId, rate_per_sec: 50 })).rate_per_sec, 50);
  const rotated = await c.adminKeysRotate({ key_id: keyId, expire_old_in_seconds: 1 });
  assert.notEqual(rotated.key.key_id, keyId);
  assert.ok((await c.adminKeysRevoke({ key_id: rotated.key.key_id })).revoked_at);
  assert.ok((await c.adminProjects()).some((p) => p.name === "default"));
  const p = await c.adminProjectsLimits({ project: "default", rate_per_sec: null });
  assert.equal(p.name, "default");
});

test("consume long-polls until the AbortSignal fires, then rejects at once with ABORTED", async () => {
  const q = queueName("poll");
  await c.createQueue({ name: q });
  const ctl = new AbortController();
  const polling = c.consume(q, { waitSeconds: 20, signal: ctl.signal });
  let settled = false;
  polling.catch(() => {}).finally(() => (settled = true));
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(settled, false, "the poll waits for a message");
  const waitingBefore = await longPollsWaiting();
  assert.ok(waitingBefore >= 1, "the server counts the poll as waiting");
  ctl.abort();
  const err = await polling.catch((e) => e);
  assert.ok(err instanceof OnceqError);
  assert.equal(err.code, "ABORTED");
  assert.equal(err.retryable, false);
  // The abort closed the poll's connection: the server stops waiting on it
  // (long before the 20 s wait would have ended) ...
  await eventually(async () => (await longPollsWaiting()) < waitingBefore, { everyMs: 10 });
  // ... and a message published now is there for the next consumer: the
  // aborted poll took nothing. (Published before the server has seen the
  // connection close, a message may go to the poll and come back later:
  // docs/guarantees.md, "A publish hands its message to a waiting
  // consumer".)
  await c.publish(q, { after: true });
  const [m] = await c.consume(q);
  assert.deepEqual(m?.payload, { after: true });
});

test("a long poll's timeout rejects with TIMEOUT (retryable); a message ends the poll early", async () => {
  const q = queueName("poll2");
  await c.createQueue({ name: q });
  const err = await c.consume(q, { waitSeconds: 20, timeoutMs: 300 }).catch((e) => e);
  assert.equal(err.code, "TIMEOUT");
  assert.equal(err.retryable, true);
  const polling = c.consume(q, { waitSeconds: 20 });
  await c.publish(q, { wake: 1 });
  const [m] = await polling;
  assert.deepEqual(m?.payload, { wake: 1 });
});
