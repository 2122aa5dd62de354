// What the layer answers by itself: refusals (a JSON error body with a
// stable code, the queue API's shape), 409 while in flight, and replays of
// recorded answers (the Rust `response.rs`).
import type { Header } from "./headers.js";
import type { ClaimOutcome } from "./store.js";

/** An HTTP answer, framework-neutral. */
export interface Answer {
  status: number;
  headers: Header[];
  body: Buffer;
}

/** `Idempotent-Replayed: true` marks an answer sent from the ledger. */
export const IDEMPOTENT_REPLAYED = "idempotent-replayed";

/** `{"error":{"code","message","hint"}}`. */
export function refusal(status: number, code: string, message: string, hint?: string): Answer {
  const error = hint === undefined ? { code, message } : { code, message, hint };
  return {
    status,
    headers: [["content-type", "application/json"]],
    body: Buffer.from(JSON.stringify({ error })),
  };
}

/** A refusal the client should retry after `secs`. */
export function retryLater(status: number, code: string, message: string, secs: number, hint?: string): Answer {
  const a = refusal(status, code, message, hint);
  a.headers.push(["retry-after", String(secs)]);
  return a;
}

/** Whole seconds from `now` to `until`, rounded up, at least 1. */
export function secondsUntil(until: Date, now: Date): number {
  return Math.max(1, Math.ceil(Math.max(0, until.getTime() - now.getTime()) / 1000));
}

/** The answer to a claim that did not claim; undefined for "claimed". */
export function answerFor(o: ClaimOutcome, now: Date, mismatchStatus: number): Answer | undefined {
  switch (o.outcome) {
    case "claimed":
      return undefined;
    case "completed": {
      const r = o.response;
      return {
        status: r.status,
        headers: [...r.headers.filter(([n]) => n !== IDEMPOTENT_REPLAYED), [IDEMPOTENT_REPLAYED, "true"]],
        body: r.body,
      };
    }
    case "in_flight":
      // A retry while the first request runs (the seed crashed here).
      return retryLater(
        409,
        "REQUEST_IN_FLIGHT",
        "a request with this Idempotency-Key is still being processed; retry later",
        secondsUntil(o.lockedUntil, now),
        "retry after the Retry-After seconds with the same key and body",
      );
    case "mismatch":
      return refusal(
        mismatchStatus,
        "IDEMPOTENCY_KEY_REUSED",
        "this Idempotency-Key was already used with a different request",
        "send a new Idempotency-Key for a different request body",
      );
  }
}
