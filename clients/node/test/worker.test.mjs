// The worker on the real server and the real application database: effects
// commit with the job fact, a crashed handler rolls back and the message
// comes back with its error, done work is acked without running, a live
// holder defers, an expired one is taken over and its late finish is
// fenced, heartbeats push both leases, and a SIGTERM stop finishes or
// releases what it holds.
import assert from "node:assert/strict";
import { once } from "node:events";
import test from "node:test";

import { Worker } from "../dist/index.js";
import { client, eventually, pool, queueName, quiet } from "../test-support/env.mjs";

const c = client();
const db = pool();
await db.query(
  "CREATE TABLE IF NOT EXISTS node_effects (id bigserial PRIMARY KEY, fact text NOT NULL, by_worker text NOT NULL, payload jsonb)",
);
test.after(() => db.end());

const effects = async (fact) =>
  (await db.query("SELECT by_worker FROM node_effects WHERE fact = $1 ORDER BY id", [fact])).rows.map((r) => r.by_worker);
const factRow = async (fact) => (await db.query("SELECT * FROM onceq_job_facts WHERE fact = $1", [fact])).rows[0];

/** A promise with its resolve, for handlers the test lets go. */
function gate() {
  let open;
  const p = new Promise((r) => (open = r));
  return { p, open };
}

function worker(queue, handler, opts = {}) {
  return new Worker({ client: c, pool: db, queue, handler, logger: quiet, signals: [], waitSeconds: 0, ...opts });
}

/** A handler writing one effect row through the job's transaction. */
const writeEffect = (by) => async (job, tx) => {
  await tx.query("INSERT INTO node_effects (fact, by_worker, payload) VALUES ($1, $2, $3)", [job.fact, by, job.payload]);
};

test("effects commit with the fact; done work is acked without running again; acks go by batch when offered", async () => {
  const q = queueName("w-done");
  let runs = 0;
  const w = worker(q, async (job, tx) => {
    runs++;
    await writeEffect("w")(job, tx);
    job.setResult({ built: job.fact });
  });
  await c.createQueue({ name: q, completed_retention_seconds: 600 });
  const first = await c.publish(q, { job_fact: `${q}:a` });
  await c.publish(q, { job_fact: `${q}:b` });
  await c.publish(q, { job_fact: `${q}:c` });
  const t1 = await w.runOnce();
  assert.deepEqual([t1.received, t1.done], [3, 3]);
  assert.deepEqual(await effects(`${q}:a`), ["w"]);
  assert.equal((await factRow(`${q}:a`)).state, "done");
  const detail = await c.getMessage(q, first.message.message_id);
  assert.equal(detail.state, "completed");
  assert.deepEqual(detail.result, { built: `${q}:a` }, "the handler's result went with the ack");

  const batched = (await c.features()).ackBatch;
  const m = w.metrics();
  if (batched) assert.deepEqual([m.ackCalls, m.batchedAckCalls], [1, 1], "three acks in one batch call");
  else assert.deepEqual([m.ackCalls, m.batchedAckCalls], [3, 0], "no batch ack on this server: one ack each");

  // The same work published again (a retried request), and a redelivery
  // of work whose commit landed before its ack was lost.
  await c.publish(q, { job_fact: `${q}:a` });
  await db.query(
    "INSERT INTO onceq_job_facts (fact, state, owner, claim, locked_until, started_at, finished_at) VALUES ($1, 'done', 'crashed', 'x', now(), now(), now())",
    [`${q}:d`],
  );
  await c.publish(q, { job_fact: `${q}:d` });
  const t2 = await w.runOnce();
  assert.deepEqual([t2.received, t2.duplicate, t2.done], [2, 2, 0]);
  assert.equal(runs, 3, "the handler did not run for done work");
  assert.deepEqual(await effects(`${q}:a`), ["w"]);
  assert.deepEqual(await effects(`${q}:d`), []);
  assert.equal((await c.stats(q)).message_count, 0, "duplicates are acked");
});

test("a handler that throws after writing: effect rolled back, fact released, redelivered with the error as last_error", async () => {
  const q = queueName("w-crash");
  const fact = `${q}:x`;
  const seen = [];
  const w = worker(q, async (job, tx) => {
    seen.push(job.delivery_count);
    await writeEffect("w")(job, tx);
    if (job.delivery_count === 1) throw new Error("export failed: disk full");
  });
  const { message } = await c.publish(q, { job_fact: fact });
  const t1 = await w.runOnce();
  assert.equal(t1.failed, 1);
  assert.deepEqual(await effects(fact), [], "the write inside the failed transaction is gone");
  assert.equal(await factRow(fact), undefined, "the fact is released");
  const back = await c.getMessage(q, message.message_id);
  assert.equal(back.state, "available", "no retry_backoff on the queue: back at once");
  assert.equal(back.last_error, "export failed: disk full");
  assert.equal(back.attempts.at(-1)?.error, "export failed: disk full");

  const t2 = await w.runOnce();
  assert.equal(t2.done, 1);
  assert.deepEqual(seen, [1, 2]);
  assert.deepEqual(await effects(fact), ["w"]);
});

// On a worker without the listener the "error" event is thrown inside pg's
// socket handler and the job never settles: the timeout makes that a failure.
test("the job's connection breaking between its queries fails the job, not the process", { timeout: 30_000 }, async () => {
  const q = queueName("w-lost");
  const fact = `${q}:x`;
  const w = worker(q, async (job, tx) => {
    if (job.delivery_count > 1) return writeEffect("w")(job, tx);
    const { rows } = await tx.query("SELECT pg_backend_pid() AS pid");
    // The database ends the connection while the handler waits on something
    // else: pg hears it with no query running and emits "error" on the client.
    const closed = once(tx.connection.stream, "close");
    await db.query("SELECT pg_terminate_backend($1)", [rows[0].pid]);
    await closed;
    await writeEffect("w")(job, tx);
  });
  await c.publish(q, { job_fact: fact });
  const t1 = await w.runOnce();
  assert.equal(t1.failed, 1, "the job failed on its broken connection");
  assert.deepEqual(await effects(fact), []);
  const t2 = await w.runOnce();
  assert.equal(t2.done, 1, "redelivered and done on a good connection");
  assert.deepEqual(await effects(fact), ["w"]);
});

test("a failed job's nack leaves the delay to the queue's retry_backoff", async () => {
  const q = queueName("w-backoff");
  await c.createQueue({ name: q });
  await c.updateQueue({ name: q, retry_backoff: { initial_seconds: 120, max_seconds: 120, jitter: 0 } });
  const w = worker(q, () => {
    throw new Error("upstream 502");
  });
  const { message } = await c.publish(q, { job_fact: `${q}:x` });
  assert.equal((await w.runOnce()).failed, 1);
  const back = await c.getMessage(q, message.message_id);
  assert.equal(back.state, "delayed");
  assert.equal(back.last_error, "upstream 502");
  assert.ok(Date.parse(back.visible_at) - Date.now() > 60_000, `visible at ${back.visible_at}`);
});

test("a poison message dead-letters after its last hand-out, and the worker counts it", async () => {
  const q = queueName("w-poison");
  await c.createQueue({ name: q, max_retries: 1 });
  const w = worker(q, () => {
    throw new Error("cannot parse export request");
  });
  const { message } = await c.publish(q, { job_fact: `${q}:x` });
  assert.equal((await w.runOnce()).failed, 1);
  assert.equal(w.metrics().deadLettered, 0);
  assert.equal((await w.runOnce()).failed, 1);
  assert.equal(w.metrics().deadLettered, 1, "the second failure of max_retries 1 dead-letters");
  const dead = await c.getMessage(q, message.message_id);
  assert.equal(dead.state, "dead_lettered");
  assert.equal(dead.last_error, "cannot parse export request");
  assert.equal(await factRow(`${q}:x`), undefined, "no fact is left behind");
});

test("a live holder defers the second message; after its lease the fact is taken over; the old holder's finish is fenced", async () => {
  const q = queueName("w-take");
  const fact = `${q}:x`;
  const started = gate();
  const release = gate();
  // A: holds the fact with a 5 s lease and no heartbeat, stuck until released.
  const a = worker(
    q,
    async (job, tx) => {
      started.open();
      await release.p;
      await writeEffect("a")(job, tx);
    },
    { factLeaseMs: 5_000, heartbeatMs: 60_000, visibilityTimeout: 120, batch: 1 },
  );
  await c.createQueue({ name: q, completed_retention_seconds: 600 });
  const mA = await c.publish(q, { job_fact: fact });
  const aDone = a.runOnce();
  await started.p;

  // B, on the same clock: the holder is live, so B hands its message back. Never acks it.
  let bRuns = 0;
  const b = worker(q, () => void bRuns++, { batch: 1 });
  const mB = await c.publish(q, { job_fact: fact });
  assert.equal((await b.runOnce()).deferred, 1);
  assert.equal(bRuns, 0);
  const deferred = await c.getMessage(q, mB.message.message_id);
  assert.equal(deferred.state, "delayed", "handed back, not acked");
  assert.equal(deferred.last_error, null, "a deferral is not a failure");

  // C, ten seconds later by its clock: A's lease is over, C takes the fact over and finishes.
  const later = () => new Date(Date.now() + 10_000);
  const cw = worker(q, writeEffect("c"), { clock: later, batch: 1 });
  const mC = await c.publish(q, { job_fact: fact });
  assert.equal((await cw.runOnce()).done, 1);
  assert.equal((await factRow(fact)).attempts, 2, "one takeover");
  assert.equal((await c.getMessage(q, mC.message.message_id)).state, "completed");

  // A wakes up and writes: its mark_done finds the fact no longer its own and rolls back.
  release.open();
  assert.equal((await aDone).superseded, 1);
  assert.deepEqual(await effects(fact), ["c"], "only the taker's effect committed");
  assert.equal((await c.getMessage(q, mA.message.message_id)).state, "in_flight", "A leaves its message: never acked by a loser");
});

test("heartbeats push the message lease and the fact's lease while the handler runs", async () => {
  const q = queueName("w-beat");
  const fact = `${q}:x`;
  let before;
  let after;
  let consumedLease;
  const w = worker(
    q,
    async (job) => {
      consumedLease = Date.parse(job.lease_expires_at);
      before = (await factRow(fact)).locked_until.getTime();
      const start = w.metrics().heartbeats;
      await eventually(() => w.metrics().heartbeats >= start + 2, { everyMs: 10 });
      after = (await factRow(fact)).locked_until.getTime();
    },
    { heartbeatMs: 100, visibilityTimeout: 20, factLeaseMs: 60_000 },
  );
  const { message } = await c.publish(q, { job_fact: fact });
  const leaseCheck = eventually(async () => {
    const m = await c.getMessage(q, message.message_id);
    return m.state === "in_flight" && Date.parse(m.lease_expires_at) > consumedLease ? m : null;
  });
  const [tick, leased] = await Promise.all([w.runOnce(), leaseCheck]);
  assert.equal(tick.done, 1);
  assert.ok(after > before, "the fact's lease moved forward");
  assert.ok(Date.parse(leased.lease_expires_at) > consumedLease, "the message's lease was extended");
});

test("a heartbeat that cannot extend the message counts as a miss, not a heartbeat", async () => {
  const q = queueName("w-miss");
  const fact = `${q}:x`;
  let beats;
  let misses;
  const w = worker(
    q,
    async () => {
      await eventually(() => w.metrics().heartbeats >= 1, { everyMs: 5 });
      // The message goes from under the running job: the fact's lease still
      // moves on, the message's cannot. Past three misses no beat begun
      // before the purge is left.
      assert.equal(await c.purge(q), 1);
      await eventually(() => w.metrics().heartbeatMisses >= 3, { everyMs: 5 });
      beats = w.metrics().heartbeats;
      await eventually(() => w.metrics().heartbeatMisses >= 6, { everyMs: 5 });
      misses = w.metrics().heartbeatMisses;
    },
    { heartbeatMs: 20 },
  );
  await c.publish(q, { job_fact: fact });
  await w.runOnce();
  assert.ok(misses >= 6);
  assert.equal(w.metrics().heartbeats, beats, "a beat that moved no message lease counted");
});

test("SIGTERM: the worker stops consuming, finishes what it can within the grace, and releases the rest", async () => {
  const q = queueName("w-stop");
  const quickStarted = gate();
  const stuckStarted = gate();
  const quickGo = gate();
  let stuckSignal;
  const w = new Worker({
    client: c,
    pool: db,
    queue: q,
    logger: quiet,
    concurrency: 2,
    waitSeconds: 20,
    shutdownGraceMs: 1_500,
    signals: ["SIGTERM"],
    handler: async (job, tx) => {
      await writeEffect("w")(job, tx);
      if (job.payload.kind === "quick") {
        quickStarted.open();
        await quickGo.p;
        return;
      }
      stuckSignal = job.signal;
      stuckStarted.open();
      await new Promise((resolve) => job.signal.addEventListener("abort", resolve));
      throw job.signal.reason;
    },
  });
  const quick = await c.publish(q, { kind: "quick", job_fact: `${q}:quick` });
  const stuck = await c.publish(q, { kind: "stuck", job_fact: `${q}:stuck` });
  const running = w.run();
  await Promise.all([quickStarted.p, stuckStarted.p]);

  process.kill(process.pid, "SIGTERM");
  quickGo.open();
  await running;

  assert.equal(stuckSignal.aborted, true, "the stuck job was told to stop");
  assert.deepEqual(await effects(`${q}:quick`), ["w"], "the quick job finished within the grace");
  assert.equal((await c.stats(q)).in_flight, 0, "nothing is left held");
  assert.deepEqual(await effects(`${q}:stuck`), [], "the released job's transaction rolled back");
  assert.equal(await factRow(`${q}:stuck`), undefined, "its fact is released");
  const back = await c.getMessage(q, stuck.message.message_id);
  assert.equal(back.state, "available", "nacked without delay for the next worker");
  assert.equal(back.last_error, "the worker shut down before the job finished");
  await assert.rejects(c.getMessage(q, quick.message.message_id), (e) => e.code === "MESSAGE_NOT_FOUND", "acked and gone");
  const m = w.metrics();
  assert.deepEqual([m.done, m.abandoned], [1, 1]);
  // Stopped means stopped: a new message stays where it is.
  await c.publish(q, { kind: "later" });
  assert.equal((await c.stats(q)).available, 2);
  assert.equal(process.listenerCount("SIGTERM"), 0, "its signal handler is gone");
});

test("stop() ends a long poll at once and resolves with nothing held", async () => {
  const q = queueName("w-idle");
  await c.createQueue({ name: q });
  const w = new Worker({ client: c, pool: db, queue: q, logger: quiet, signals: [], waitSeconds: 20, handler: () => {} });
  const running = w.run();
  await eventually(() => w.metrics().polls >= 1, { everyMs: 10 });
  let timer;
  const late = new Promise((r) => (timer = setTimeout(() => r("late"), 5_000)));
  const first = await Promise.race([w.stop().then(() => "stopped"), late]);
  clearTimeout(timer);
  assert.equal(first, "stopped", "stop did not wait for the 20 s poll");
  await running;
  const after = await c.publish(q, { after: 1 });
  // The aborted poll keeps nothing. A publish that reaches the server before
  // it has seen the poll's connection close may hand the message to that
  // poll (docs/guarantees.md, a publish hands its message to a waiting
  // consumer); it is then handed back as the poll ends, never counted as a
  // delivery, long before its 30 s lease could run out.
  await eventually(async () => (await c.stats(q)).available === 1, { timeoutMs: 5_000, everyMs: 20 });
  const back = await c.getMessage(q, after.message.message_id);
  assert.deepEqual([back.state, back.delivery_count], ["available", 0], "the aborted poll took nothing");
});
