// The framework-neutral core: one request's way through the ledger,
// key → body → claim → (handler) → record or release. An adapter (Express,
// Hono, …) turns its request into a `LedgerRequest`, sends the `Answer`s
// this returns, and runs its handler when told to (the Rust `service.rs`
// and `record.rs`).
import { randomUUID } from "node:crypto";

import { type Answer, answerFor, refusal, retryLater } from "./answer.js";
import { type BodyBytes, fingerprint, scope } from "./fingerprint.js";
import { type Header, recordableHeaders } from "./headers.js";
import { readKey } from "./key.js";
import { type Claim, PgLedger, type Queryable } from "./store.js";

/** Default claim lease: a retry sooner is told "in flight", one later takes over. */
export const DEFAULT_LEASE_MS = 30_000;
/** Default retention: how long an answer is replayed. */
export const DEFAULT_RETENTION_MS = 24 * 60 * 60 * 1000;
/** Default request body limit (the body is buffered to be fingerprinted). */
export const DEFAULT_MAX_BODY = 1024 * 1024;
/** Default limit on a recorded response body. */
export const DEFAULT_MAX_RESPONSE_BODY = 1024 * 1024;
/** Seconds a client waits before retrying after the ledger failed. */
const LEDGER_RETRY_AFTER_SECS = 1;

/** Where the ledger's diagnostics go (default: errors to console.error). */
export type Log = (level: "debug" | "warn" | "error", message: string, fields: Record<string, unknown>) => void;

/** The options every adapter shares. */
export interface LedgerOptions {
  /** The application's PostgreSQL (a `pg.Pool`), holding `onceq_request_ledger`. */
  pool: Queryable;
  /**
   * A request without `Idempotency-Key`: `true` (default) refuses it with
   * 400; `false` runs the handler without the ledger; `"generate"` gives it
   * a fresh key, used like a client's and sent back in the response header.
   */
  required?: boolean | "generate";
  /**
   * How long a claim holds the key, in ms (default 30 s). The lease is not
   * renewed: pick it above the handler's longest run; a retry after it runs
   * the handler again (safe when downstream calls reuse the key).
   */
  leaseMs?: number;
  /** How long an answer is replayed, in ms (default 24 h; never below the lease). */
  retentionMs?: number;
  /** The status for a key reused with another request: 422 (default) or 409 (the seed's). */
  mismatchStatus?: 409 | 422;
  /** Largest request body accepted, in bytes (default 1 MiB); bigger is 413. */
  maxBody?: number;
  /** Largest answer recorded (default 1 MiB); a bigger one is sent unrecorded and its claim released. */
  maxResponseBody?: number;
  /** Where "now" comes from (leases, retention); tests move it instead of sleeping. */
  now?: () => Date;
  log?: Log;
}

/** A request as the core needs it. */
export interface LedgerRequest {
  method: string;
  /** The route template (`/orders/:id`), so a key means one thing per route. */
  route: string;
  /** Every value the Idempotency-Key header came with. */
  keyValues: readonly string[] | undefined;
  contentType: string | undefined;
  /** Who the caller is; undefined means "anonymous". */
  principal: string | undefined;
  /** Reads the body (called once, after the key is known), or a refusal. */
  body: (maxBody: number) => Promise<BodyBytes | Answer>;
}

/** What to do with a request. */
export type Decision =
  /** Not the ledger's business (a safe method, or no key where none is required). */
  | { kind: "pass" }
  /** Send this answer; the handler does not run. */
  | { kind: "answer"; answer: Answer }
  /** The key is claimed: run the handler, then `settle` (or `release` if it threw). */
  | { kind: "run"; key: string; generated: boolean; held: Held };

/** A claim being held while the handler runs. */
export interface Held {
  /**
   * The handler answered. A final answer below 500 whose body is known
   * and within `maxResponseBody` is recorded (fenced by the claim's
   * token); anything else releases the claim so a retry runs again.
   * Pass `body: undefined` for a body that could not be kept whole.
   */
  settle(answer: { status: number; headers: Iterable<Header>; body: Buffer | undefined }): Promise<void>;
  /** The handler failed without an answer: give the claim up. */
  release(why: string): Promise<void>;
}

/** Methods idempotent by definition pass straight through. */
const SAFE = new Set(["GET", "HEAD", "OPTIONS", "TRACE"]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const defaultLog: Log = (level, message, fields) => {
  if (level === "error") console.error(`onceq idempotency: ${message}`, fields);
};

/** The core, configured once and shared by every request of a route. */
export class RequestGuard {
  readonly ledger: PgLedger;
  readonly maxBody: number;
  /** The largest answer recorded: adapters keep no more of a body than this. */
  readonly maxResponseBody: number;
  private readonly o: Required<Omit<LedgerOptions, "pool">>;

  constructor(options: LedgerOptions) {
    this.ledger = new PgLedger(options.pool);
    const retention = options.retentionMs ?? DEFAULT_RETENTION_MS;
    if (!(retention > 0)) throw new RangeError("idempotency retentionMs must be positive");
    this.o = {
      required: options.required ?? true,
      leaseMs: options.leaseMs ?? DEFAULT_LEASE_MS,
      retentionMs: retention,
      mismatchStatus: options.mismatchStatus ?? 422,
      maxBody: options.maxBody ?? DEFAULT_MAX_BODY,
      maxResponseBody: options.maxResponseBody ?? DEFAULT_MAX_RESPONSE_BODY,
      now: options.now ?? (() => new Date()),
      log: options.log ?? defaultLog,
    };
    this.maxBody = this.o.maxBody;
    this.maxResponseBody = this.o.maxResponseBody;
  }

  /** Decides a request: pass it on, answer it, or claim its key and run it. */
  async decide(req: LedgerRequest): Promise<Decision> {
    const method = req.method.toUpperCase();
    if (SAFE.has(method)) return { kind: "pass" };
    const read = readKey(req.keyValues);
    let key: string;
    let generated = false;
    if (read.kind === "key") {
      key = read.key;
    } else if (read.kind === "bad") {
      const message =
        read.why === "repeated"
          ? "send exactly one Idempotency-Key header"
          : "Idempotency-Key must be 1 to 255 visible ASCII characters";
      return answer(refusal(400, "IDEMPOTENCY_KEY_INVALID", message, "use a UUID or another printable token as the key"));
    } else if (this.o.required === "generate") {
      key = randomUUID();
      generated = true;
    } else if (this.o.required) {
      return answer(
        refusal(
          400,
          "IDEMPOTENCY_KEY_REQUIRED",
          "this route requires an Idempotency-Key header",
          "send Idempotency-Key: <a fresh UUID> and reuse it when retrying the same request",
        ),
      );
    } else {
      return { kind: "pass" };
    }

    const body = await req.body(this.o.maxBody);
    if ("status" in body) return answer(body);
    const now = this.o.now();
    const claim: Claim = {
      scope: scope(req.principal ?? "anonymous", method, req.route),
      key,
      fingerprint: fingerprint(method, req.route, req.contentType, body),
      token: randomUUID(),
      lockedUntil: new Date(now.getTime() + this.o.leaseMs),
      expiresAt: new Date(now.getTime() + Math.max(this.o.retentionMs, this.o.leaseMs)),
    };
    let outcome;
    try {
      outcome = await this.ledger.claim(claim, now);
    } catch (e) {
      // A failing database is not "in flight": nothing was claimed, so the
      // retry is safe.
      this.o.log("error", "claim failed", { key, error: e });
      return answer(
        retryLater(
          503,
          "LEDGER_UNAVAILABLE",
          "the request ledger is unavailable; retry later",
          LEDGER_RETRY_AFTER_SECS,
          "retry with the same Idempotency-Key",
        ),
      );
    }
    const refused = answerFor(outcome, now, this.o.mismatchStatus);
    if (refused) return answer(refused);
    // From here on the claim is held. If the process dies, nothing releases
    // it: the lease does, and a retry after it takes the claim over.
    return { kind: "run", key, generated, held: this.held(claim) };
  }

  private held(claim: Claim): Held {
    let done = false;
    const once = () => {
      const first = !done;
      done = true;
      return first;
    };
    return {
      settle: async ({ status, headers, body }) => {
        if (!once()) return;
        if (status >= 500) return this.release(claim, "the handler answered a server error");
        if (body === undefined || body.length > this.o.maxResponseBody) {
          return this.release(claim, "the answer is too large or streamed to record");
        }
        await this.complete(claim, { status, headers: recordableHeaders(headers), body });
      },
      release: async (why) => {
        if (once()) await this.release(claim, why);
      },
    };
  }

  /**
   * Records the answer, retrying a failing ledger briefly (a database that
   * blinks between handler and record would leave the key in flight until
   * the lease ends); bounded so the client's answer is not held for long.
   */
  private async complete(claim: Claim, stored: Answer): Promise<void> {
    const pauses = [50, 250];
    for (let attempt = 0; ; attempt++) {
      try {
        const applied = await this.ledger.complete(claim.scope, claim.key, claim.token, stored, this.o.now());
        // Not applied: the lease ran out and a retry took the claim over;
        // that retry records its own (equivalent) answer.
        if (!applied) this.o.log("warn", "claim taken over before the answer was recorded", { key: claim.key });
        return;
      } catch (e) {
        const pause = pauses[attempt];
        if (pause === undefined) {
          // The client still gets the answer; the lease lets a retry take over.
          this.o.log("error", "recording the answer failed", { key: claim.key, error: e });
          return;
        }
        this.o.log("warn", "recording the answer failed; retrying", { key: claim.key, error: e });
        await sleep(pause);
      }
    }
  }

  /** Best-effort release; when it fails the lease covers it. */
  private async release(claim: Claim, why: string): Promise<void> {
    try {
      await this.ledger.release(claim.scope, claim.key, claim.token);
      this.o.log("debug", "claim released", { key: claim.key, why });
    } catch (e) {
      this.o.log("error", "releasing the claim failed; a retry takes it over when the lease ends", {
        key: claim.key,
        why,
        error: e,
      });
    }
  }
}

const answer = (a: Answer): Decision => ({ kind: "answer", answer: a });
