// The worker: at-least-once delivery in, exactly-once effects out (key 3
// of three-keys.md: the job fact), mirroring the Rust toolkit's worker
// (crates/onceq/src/worker/). One message:
//
//   consume ─▶ claim fact (one statement, job_fact/postgres/claim.sql)
//     ├─ done ───────────────────────────▶ ack(receipt)            [duplicate]
//     ├─ running, live, another attempt ─▶ nack(delay = lease left) [deferred]
//     │    (never ack: the holder may still fail)
//     └─ ours (new, or an expired lease taken over)
//          BEGIN; handler(job, tx)  ‖ heartbeat: extend(receipt) + push the fact's lease
//            ├─ throws ─▶ ROLLBACK; release fact; nack(receipt, error text)  [failed]
//            ▼
//          UPDATE fact SET done WHERE claim = mine AND running
//            ├─ 0 rows (taken over) ─▶ ROLLBACK; leave the message        [superseded]
//            ▼
//          COMMIT (effects and `done` together) ─▶ ack(receipt, result)   [done]
//            (acks of jobs ending together share one batch call; the slot is free at once)
//
// Shutdown (`stop()`, SIGTERM, SIGINT): stop consuming at once, let running
// jobs finish for `shutdownGraceMs`, then release the rest (the handler's
// connection is closed, which rolls its transaction back; the fact is
// released; the message nacked without delay) and resolve.

import { randomUUID } from "node:crypto";

import type pg from "pg";

import type { Client } from "../client/client.js";
import { OnceqError } from "../client/errors.js";
import { sleep } from "../client/sleep.js";
import { inMessageSpan } from "../client/trace.js";
import type { ConsumedMessage } from "../client/types.js";
import { Acker } from "./acker.js";
import { BeatLink } from "./beat-link.js";
import { type Claim, claimFact, heartbeatFact, jobFact, markFactDone, migrate, purgeDoneFacts, releaseFact } from "./fact.js";
import { consoleLogger, type Logger } from "./logger.js";
import { Semaphore } from "./semaphore.js";

/** A message being worked on: the consumed message, its fact, and what the handler may use. */
export type Job = ConsumedMessage & {
  /** The job fact (see `jobFact`): pass it downstream as the idempotency key of effects elsewhere. */
  readonly fact: string;
  /** Aborted when the worker gives the job up (shutdown grace over). */
  readonly signal: AbortSignal;
  /** What the work produced (any JSON, at most 64 KiB), sent with the ack and kept as the message's `result`. */
  setResult(result: unknown): void;
};

/**
 * The work. Effects written through `tx` (a pooled client inside a
 * transaction: use it, never release or commit it) commit together with
 * the fact's `done` mark, exactly once. Effects elsewhere should pass
 * `job.fact` downstream as their idempotency key. A throw rolls `tx` back,
 * releases the fact and nacks with the error's text as the failure reason.
 */
export type Handler = (job: Job, tx: pg.PoolClient) => Promise<void> | void;

export interface Backoff {
  /** Cap of the first wait, ms; doubles each time. */
  baseMs: number;
  /** Largest wait, ms. */
  maxMs: number;
}

export interface WorkerOptions {
  client: Client;
  /** The application's database: the job facts' and the handler's transactions. */
  pool: pg.Pool;
  queue: string;
  handler: Handler;
  /** Jobs at once; each holds a pooled connection. Default 8. */
  concurrency?: number;
  /** Most messages per consume, 1..10. Default 10. */
  batch?: number;
  /** Long poll of `run`, 0..20 s. Default 20. */
  waitSeconds?: number;
  /** Message lease asked for on consume and on each heartbeat, s. Default 30. */
  visibilityTimeout?: number;
  /** How often a running job extends its message lease and its fact's lease, ms. Default 10 000. */
  heartbeatMs?: number;
  /** How long a claimed fact stays ours without a heartbeat, ms; then a crashed worker's fact is taken over. Default 60 000. */
  factLeaseMs?: number;
  /**
   * Delay of the nack after a failed job, by delivery count. Default none:
   * the nack goes without `delay_seconds` and the queue's `retry_backoff`
   * applies (set it with `updateQueue`).
   */
  retry?: Backoff;
  /** Wait after a failed consume (also between empty polls when `waitSeconds` is 0). Default 250 ms doubling to 30 s; a longer Retry-After wins. */
  pollBackoff?: Backoff;
  /** How long `stop` lets running jobs finish, ms, before releasing them. Default 30 000. */
  shutdownGraceMs?: number;
  /** Owner written on facts. Default a random UUID. */
  workerId?: string;
  /** Where fact leases read the time (tests move it). Default the system clock. */
  clock?: () => Date;
  /** Signals that stop `run` gracefully. Default SIGTERM and SIGINT; `[]` for none. */
  signals?: NodeJS.Signals[];
  /** How long an ack waits for others to share its call, ms. Default 10. */
  ackLingerMs?: number;
  logger?: Logger;
}

/** How one job ended. */
export type Outcome =
  | "done"
  | "duplicate"
  | "deferred"
  | "failed"
  | "superseded"
  | "abandoned";

/** What `runOnce` / `drain` did. */
export interface Tick {
  received: number;
  done: number;
  duplicate: number;
  deferred: number;
  failed: number;
  superseded: number;
  abandoned: number;
}

export interface WorkerMetrics extends Tick {
  polls: number;
  pollFailures: number;
  /** Beats that pushed both leases, the message's and the fact's. */
  heartbeats: number;
  /** Beats that left a lease where it was (failed, timed out, or no longer the job's). */
  heartbeatMisses: number;
  deadLettered: number;
  ackLost: number;
  /** Calls that carried acks (a batch call counts once). */
  ackCalls: number;
  /** Of those, calls of the server's batch ack. */
  batchedAckCalls: number;
}

const NACK_ERROR_MAX_BYTES = 8192;
const MAX_DELAY_SECONDS = 604_800;
const FATAL_CODES = new Set(["UNAUTHORIZED", "INVALID_PARAMS", "INVALID_ARGUMENT"]);

type Work =
  | { kind: "committed" }
  | { kind: "failed"; error: unknown }
  | { kind: "superseded" }
  | { kind: "abandoned" };

export class Worker {
  readonly queue: string;
  readonly workerId: string;
  readonly #client: Client;
  readonly #pool: pg.Pool;
  readonly #handler: Handler;
  readonly #o: Required<Omit<WorkerOptions, "client" | "pool" | "queue" | "handler" | "retry" | "workerId">> & {
    retry?: Backoff;
  };
  readonly #log: Logger;
  readonly #slots: Semaphore;
  readonly #beatLink: BeatLink;
  readonly #acker: Acker;
  readonly #m: WorkerMetrics = {
    received: 0, done: 0, duplicate: 0, deferred: 0, failed: 0, superseded: 0, abandoned: 0,
    polls: 0, pollFailures: 0, heartbeats: 0, heartbeatMisses: 0, deadLettered: 0, ackLost: 0, ackCalls: 0, batchedAckCalls: 0,
  };
  #ready: Promise<void> | undefined;
  #running: Promise<void> | undefined;
  #stop = new AbortController();
  #abandon = new AbortController();
  readonly #jobs = new Set<Promise<Outcome>>();

  constructor(opts: WorkerOptions) {
    const o = {
      concurrency: 8,
      batch: 10,
      waitSeconds: 20,
      visibilityTimeout: 30,
      heartbeatMs: 10_000,
      factLeaseMs: 60_000,
      pollBackoff: { baseMs: 250, maxMs: 30_000 },
      shutdownGraceMs: 30_000,
      clock: () => new Date(),
      signals: ["SIGTERM", "SIGINT"] as NodeJS.Signals[],
      ackLingerMs: 10,
      logger: consoleLogger,
      ...definedOnly(opts),
    };
    const bad = (field: string, rule: string) => {
      throw new OnceqError({ code: "INVALID_ARGUMENT", message: `worker option ${field} must be ${rule}` });
    };
    if (!opts.client) bad("client", "a Client");
    if (!opts.pool) bad("pool", "a pg.Pool");
    if (typeof opts.handler !== "function") bad("handler", "a function");
    if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}(-dlq)?$/.test(opts.queue ?? "")) bad("queue", "a queue name");
    if (!(Number.isInteger(o.concurrency) && o.concurrency >= 1)) bad("concurrency", "an integer of at least 1");
    if (!(Number.isInteger(o.batch) && o.batch >= 1 && o.batch <= 10)) bad("batch", "1..10");
    if (!(Number.isInteger(o.waitSeconds) && o.waitSeconds >= 0 && o.waitSeconds <= 20)) bad("waitSeconds", "0..20");
    if (!(Number.isInteger(o.visibilityTimeout) && o.visibilityTimeout >= 1 && o.visibilityTimeout <= 43_200))
      bad("visibilityTimeout", "1..43200");
    if (!(o.heartbeatMs > 0)) bad("heartbeatMs", "positive");
    if (!(o.factLeaseMs >= 1000)) bad("factLeaseMs", "at least 1000");
    this.queue = opts.queue;
    this.workerId = opts.workerId ?? randomUUID();
    this.#client = opts.client;
    this.#pool = opts.pool;
    this.#handler = opts.handler;
    this.#o = o;
    this.#log = o.logger;
    if (o.heartbeatMs >= Math.min(o.visibilityTimeout * 1000, o.factLeaseMs)) {
      this.#log.warn("heartbeatMs is not shorter than the leases it keeps: long jobs will be deferred or taken over");
    }
    this.#slots = new Semaphore(o.concurrency);
    this.#beatLink = new BeatLink(opts.pool);
    this.#acker = new Acker(opts.client, opts.queue, o.ackLingerMs, this.#log, this.#m);
  }

  /** Counters since the worker was built. */
  metrics(): WorkerMetrics {
    return { ...this.#m };
  }

  /** Creates the job facts' table if it is missing (once per worker). */
  ready(): Promise<void> {
    this.#ready ??= migrate(this.#pool).catch((e: unknown) => {
      this.#ready = undefined;
      throw e;
    });
    return this.#ready;
  }

  /** Deletes done facts finished before `before`; how many. */
  async purgeDoneFacts(before: Date): Promise<number> {
    return purgeDoneFacts(this.#pool, before);
  }

  /**
   * One consume without long polling, then every message it got (up to
   * `concurrency` at once); resolves when all have settled. A queue that
   * does not exist yet counts as empty.
   */
  async runOnce(): Promise<Tick> {
    await this.ready();
    const before = this.#tick();
    let messages: ConsumedMessage[];
    try {
      messages = await this.#consume(this.#o.batch, 0);
    } catch (e) {
      if (e instanceof OnceqError && e.code === "QUEUE_NOT_FOUND") return diff(this.#tick(), before);
      throw e;
    }
    // The tick's acks go out together when its jobs have settled.
    this.#acker.hold();
    try {
      await Promise.all(
        messages.map(async (m) => {
          await this.#slots.acquire();
          await this.#spawn(m);
        }),
      );
    } finally {
      this.#acker.release();
      await this.#acker.flush();
      // The heartbeats' connection would keep the process alive between calls.
      if (!this.#running && this.#jobs.size === 0) await this.#beatLink.close();
    }
    return diff(this.#tick(), before);
  }

  /** `runOnce` until a consume comes back empty; the sum. */
  async drain(): Promise<Tick> {
    const total = emptyTick();
    for (;;) {
      const t = await this.runOnce();
      for (const k of Object.keys(total) as (keyof Tick)[]) total[k] += t[k];
      if (t.received === 0) return total;
    }
  }

  /**
   * Consumes until `stop()` (or one of `signals`): long polls of
   * `waitSeconds`, at most `concurrency` jobs at once, backoff after a
   * failed consume. Rejects only for answers a retry cannot fix (bad key,
   * bad parameters), after settling the running jobs as `stop` does.
   */
  run(): Promise<void> {
    if (this.#running) return Promise.reject(new Error("this worker is running already"));
    this.#stop = new AbortController();
    this.#abandon = new AbortController();
    this.#running = this.#run().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  /**
   * Stops consuming at once, lets running jobs finish for
   * `shutdownGraceMs`, releases the rest; resolves when every job has
   * settled (with `run`'s own promise).
   */
  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#running?.catch(() => {});
  }

  async #run(): Promise<void> {
    await this.ready();
    const onSignal = (signal: NodeJS.Signals) => {
      this.#log.info("signal received: stopping", { signal });
      this.#stop.abort();
    };
    for (const s of this.#o.signals) process.on(s, onSignal);
    this.#log.info("worker started", { queue: this.queue, worker_id: this.workerId });
    let fatal: unknown;
    try {
      await this.#poll();
    } catch (e) {
      fatal = e;
    }
    try {
      await this.#settle();
    } finally {
      for (const s of this.#o.signals) process.off(s, onSignal);
      await this.#acker.flush();
      await this.#beatLink.close();
      this.#log.info("worker stopped", { queue: this.queue, worker_id: this.workerId });
    }
    if (fatal !== undefined) throw fatal;
  }

  /** Waits for running jobs up to the grace, then gives the rest up. */
  async #settle(): Promise<void> {
    if (this.#jobs.size === 0) return;
    const all = Promise.allSettled([...this.#jobs]);
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<"over">((r) => {
      timer = setTimeout(() => r("over"), this.#o.shutdownGraceMs);
    });
    const first = await Promise.race([all, graceOver]);
    clearTimeout(timer);
    if (first === "over") {
      this.#log.warn("shutdown grace over: releasing the jobs still running", { jobs: this.#jobs.size });
      this.#abandon.abort();
      await all;
    }
  }

  async #poll(): Promise<void> {
    const stop = this.#stop.signal;
    let failures = 0;
    let idle = 0;
    while (!stop.aborted) {
      // Backpressure: no consume until a slot is free, never more messages than free slots.
      if (!(await this.#slots.acquire(stop))) return;
      let held = 1;
      while (held < this.#o.batch && this.#slots.tryAcquire()) held++;
      let messages: ConsumedMessage[];
      try {
        messages = await this.#consume(held, this.#o.waitSeconds, stop);
      } catch (e) {
        this.#slots.release(held);
        // A long poll dropped on shutdown is safe: what the server handed it comes back when its lease ends.
        if (stop.aborted) return;
        if (e instanceof OnceqError && FATAL_CODES.has(e.code)) {
          this.#log.error("consume refused; worker stops", { queue: this.queue, error: e.message });
          throw e;
        }
        failures++;
        this.#m.pollFailures++;
        const wait = Math.max(equalJitter(this.#o.pollBackoff, failures), e instanceof OnceqError ? (e.retryAfterMs ?? 0) : 0);
        this.#log.warn("consume failed; backing off", { queue: this.queue, error: String(e), failures, wait_ms: wait });
        if (!(await pause(wait, stop))) return;
        continue;
      }
      failures = 0;
      this.#slots.release(held - messages.length);
      for (const m of messages) void this.#spawn(m);
      idle = messages.length === 0 && this.#o.waitSeconds === 0 ? idle + 1 : 0;
      if (idle > 0 && !(await pause(equalJitter(this.#o.pollBackoff, idle), stop))) return;
    }
  }

  #consume(max: number, waitSeconds: number, signal?: AbortSignal): Promise<ConsumedMessage[]> {
    this.#m.polls++;
    return this.#client.consume(this.queue, {
      maxMessages: max,
      visibilityTimeout: this.#o.visibilityTimeout,
      waitSeconds,
      ...(signal && { signal }),
    });
  }

  /** Runs one job on a slot already held; the slot is given back when it settles. */
  #spawn(message: ConsumedMessage): Promise<Outcome> {
    this.#m.received++;
    const job = this.#process(message)
      .catch((e: unknown) => {
        // Only a bug of the worker itself gets here: the fact and the lease expire.
        this.#log.error("job crashed; its fact and lease will expire", { message_id: message.message_id, error: String(e) });
        return "abandoned" as Outcome;
      })
      .then((outcome) => {
        // One line per message handed out that ran to an ending (the chaos
        // run counts them, as it counts the Rust worker's).
        this.#log.debug("job settled", { message_id: message.message_id, outcome });
        this.#m[outcome]++;
        this.#jobs.delete(job);
        this.#slots.release();
        return outcome;
      });
    this.#jobs.add(job);
    return job;
  }

  async #process(message: ConsumedMessage): Promise<Outcome> {
    const abandon = new AbortController();
    const onAbandon = () => abandon.abort(new Error("the worker shut down before the job finished"));
    this.#abandon.signal.addEventListener("abort", onAbandon, { once: true });
    let result: unknown;
    const job: Job = {
      ...message,
      fact: jobFact(message),
      signal: abandon.signal,
      setResult(r: unknown) {
        result = r;
      },
    };
    try {
      return await inMessageSpan(this.queue, message, () => this.#attempt(job, () => result));
    } finally {
      this.#abandon.signal.removeEventListener("abort", onAbandon);
    }
  }

  async #attempt(job: Job, result: () => unknown): Promise<Outcome> {
    const token = randomUUID();
    let db: pg.PoolClient;
    try {
      db = await this.#pool.connect();
    } catch (e) {
      return this.#fail(job, undefined, e);
    }
    // A checked-out pg client has no "error" listener (the pool's idle one
    // is off while it is out), and an unheard "error" event ends the
    // process: a connection that breaks between the job's queries (a
    // database restart while the handler waits on something else) would
    // take the whole worker down. Heard here, the next query on it fails
    // and the job fails as any other; the pool's listener is back on at
    // release.
    const lost = (e: Error) =>
      this.#log.warn("database connection lost during a job", { message_id: job.message_id, fact: job.fact, error: errorText(e) });
    db.on("error", lost);
    // Destroyed instead of returned when abandoned: the handler may still
    // be using it, and closing it rolls its transaction back.
    let released = false;
    try {
      const now = this.#o.clock();
      let claim: Claim;
      try {
        claim = await claimFact(db, job.fact, this.workerId, token, now, new Date(now.getTime() + this.#o.factLeaseMs));
      } catch (e) {
        return await this.#fail(job, undefined, e);
      }
      if (claim.state === "done") return await this.#duplicate(job);
      if (claim.state === "held") return await this.#defer(job, claim.lockedUntil.getTime() - now.getTime());
      const work = await this.#work(db, job, token);
      switch (work.kind) {
        case "committed":
          break;
        case "superseded":
          this.#log.info("fact taken over by another worker while we worked; rolled back", {
            message_id: job.message_id,
            fact: job.fact,
          });
          return "superseded";
        case "abandoned":
          released = true;
          db.off("error", lost);
          db.release(new Error("job abandoned"));
          this.#log.warn("shutdown grace over: job released", { message_id: job.message_id, fact: job.fact });
          await this.#release(undefined, job, token);
          await this.#nack(job, 0, "the worker shut down before the job finished");
          return "abandoned";
        case "failed":
          return await this.#fail(job, { db, token }, work.error);
      }
      this.#acker.ack({
        message_id: job.message_id,
        receipt: job.receipt,
        ...(result() !== undefined && { result: result() }),
      });
      return "done";
    } finally {
      if (!released) {
        db.off("error", lost);
        db.release();
      }
    }
  }

  /** The handler and the `done` mark in one transaction, with a heartbeat while the handler runs. */
  async #work(db: pg.PoolClient, job: Job, token: string): Promise<Work> {
    try {
      await db.query("BEGIN");
    } catch (e) {
      return { kind: "failed", error: e };
    }
    const beats = new AbortController();
    const beating = this.#heartbeat(job, token, beats.signal);
    const abandoned = new Promise<"abandoned">((resolve) => {
      if (job.signal.aborted) resolve("abandoned");
      job.signal.addEventListener("abort", () => resolve("abandoned"), { once: true });
    });
    const handled = (async () => this.#handler(job, db))().then(
      () => ({ ok: true as const }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    const first = await Promise.race([handled, abandoned]);
    beats.abort();
    await beating;
    if (first === "abandoned") return { kind: "abandoned" };
    if (!first.ok) {
      await db.query("ROLLBACK").catch(() => {});
      return { kind: "failed", error: first.error };
    }
    try {
      if (!(await markFactDone(db, job.fact, token, this.#o.clock()))) {
        await db.query("ROLLBACK").catch(() => {});
        return { kind: "superseded" };
      }
      // A failed COMMIT may or may not have landed; releasing then is safe
      // either way (release only deletes a fact still running).
      await db.query("COMMIT");
      return { kind: "committed" };
    } catch (e) {
      await db.query("ROLLBACK").catch(() => {});
      return { kind: "failed", error: e };
    }
  }

  /** Every `heartbeatMs` until `signal`: extend the message lease and push the fact's lease. */
  async #heartbeat(job: Job, token: string, signal: AbortSignal): Promise<void> {
    for (;;) {
      try {
        await sleep(this.#o.heartbeatMs, signal);
      } catch {
        return;
      }
      await this.#beat(job, token);
    }
  }

  /** One beat: both leases side by side, each bounded by the interval so a stalled server delays the next beat, never stops it. */
  async #beat(job: Job, token: string): Promise<void> {
    const bound = this.#o.heartbeatMs;
    const extend = this.#client
      .extend(this.queue, job.message_id, job.receipt, this.#o.visibilityTimeout, { timeoutMs: bound })
      .then((e) => {
        if (!e.extended) this.#log.info("message lease lost; the fact still guards the work", { message_id: job.message_id });
        return e.extended;
      })
      .catch((e: unknown) => {
        this.#log.warn("heartbeat: extend failed", { message_id: job.message_id, error: String(e) });
        return false;
      });
    const until = new Date(this.#o.clock().getTime() + this.#o.factLeaseMs);
    const push = withTimeout(
      this.#beatLink.get().then((link) => heartbeatFact(link, job.fact, token, until)),
      bound,
    )
      .then((mine) => {
        if (!mine) this.#log.warn("fact taken over by another worker; this attempt will roll back", { fact: job.fact });
        return mine;
      })
      .catch((e: unknown) => {
        this.#log.warn("heartbeat: fact lease not pushed", { fact: job.fact, error: String(e) });
        return false;
      });
    const [extended, pushed] = await Promise.all([extend, push]);
    if (extended && pushed) this.#m.heartbeats++;
    else this.#m.heartbeatMisses++;
  }

  /** The work is done already: ack without doing it again. */
  async #duplicate(job: Job): Promise<Outcome> {
    this.#log.debug("duplicate of done work", { message_id: job.message_id, fact: job.fact });
    this.#acker.ack({ message_id: job.message_id, receipt: job.receipt });
    return "duplicate";
  }

  /** A live attempt holds the fact: not ours to ack. Hand the message back until about when its lease runs out. */
  async #defer(job: Job, leftMs: number): Promise<Outcome> {
    const secs = Math.min(MAX_DELAY_SECONDS, Math.max(1, Math.ceil(leftMs / 1000)));
    this.#log.debug("fact held by a live worker; deferred", { message_id: job.message_id, fact: job.fact, secs });
    await this.#nack(job, secs, undefined);
    return "deferred";
  }

  /** Rolled back already; releases the fact and nacks with the error's text. */
  async #fail(job: Job, held: { db: pg.PoolClient; token: string } | undefined, error: unknown): Promise<Outcome> {
    const text = errorText(error);
    this.#log.warn("job failed", { message_id: job.message_id, fact: job.fact, delivery_count: job.delivery_count, error: text });
    if (held) await this.#release(held.db, job, held.token);
    const delay = this.#o.retry ? Math.ceil(equalJitter(this.#o.retry, job.delivery_count) / 1000) : undefined;
    await this.#nack(job, delay, text);
    return "failed";
  }

  async #release(db: pg.PoolClient | undefined, job: Job, token: string): Promise<void> {
    try {
      if (db) {
        try {
          await releaseFact(db, job.fact, token);
          return;
        } catch {
          // The job's own connection broke (what failed the job, perhaps):
          // on another one, so the next delivery need not wait out the lease.
        }
      }
      await releaseFact(this.#pool, job.fact, token);
    } catch (e) {
      this.#log.warn("fact not released; it is taken over when its lease ends", { fact: job.fact, error: String(e) });
    }
  }

  /** Nacks with the receipt; counts a dead letter. */
  async #nack(job: Job, delaySeconds: number | undefined, error: string | undefined): Promise<void> {
    try {
      const n = await this.#client.nack(this.queue, job.message_id, {
        receipt: job.receipt,
        requeue: true,
        ...(delaySeconds !== undefined && { delaySeconds: Math.min(delaySeconds, MAX_DELAY_SECONDS) }),
        ...(error !== undefined && { error }),
      });
      if (n.dead_lettered) {
        this.#m.deadLettered++;
        this.#log.warn("message dead-lettered", { message_id: job.message_id, fact: job.fact, delivery_count: n.delivery_count });
      }
    } catch (e) {
      this.#log.warn("nack failed; the lease will expire instead", { message_id: job.message_id, error: String(e) });
    }
  }

  #tick(): Tick {
    const { received, done, duplicate, deferred, failed, superseded, abandoned } = this.#m;
    return { received, done, duplicate, deferred, failed, superseded, abandoned };
  }
}

/** A failure's text as a nack carries it: at most 8 KiB, cut at a character boundary. */
export function errorText(error: unknown): string {
  let text = error instanceof Error ? error.message || String(error) : String(error);
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length > NACK_ERROR_MAX_BYTES) {
    let end = NACK_ERROR_MAX_BYTES;
    // Step back off a UTF-8 continuation byte.
    while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
    text = bytes.subarray(0, end).toString("utf8");
  }
  return text;
}

/** Retry `attempt` (1-based) waits between half and all of `min(max, base * 2^(attempt-1))`, ms. */
function equalJitter(b: Backoff, attempt: number): number {
  const cap = Math.min(b.maxMs, b.baseMs * 2 ** Math.min(Math.max(attempt - 1, 0), 20));
  return cap / 2 + (Math.random() * cap) / 2;
}

/** Sleeps; false when `signal` cut it short. */
async function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  try {
    await sleep(ms, signal);
    return true;
  } catch {
    return false;
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function emptyTick(): Tick {
  return { received: 0, done: 0, duplicate: 0, deferred: 0, failed: 0, superseded: 0, abandoned: 0 };
}

function diff(a: Tick, b: Tick): Tick {
  const out = emptyTick();
  for (const k of Object.keys(out) as (keyof Tick)[]) out[k] = a[k] - b[k];
  return out;
}
