// Exponential backoff with full jitter, honouring Retry-After; the same
// rules as the Rust toolkit's RetryPolicy (crates/onceq/src/client/retry.rs).

import { OnceqError } from "./errors.js";
import { sleep } from "./sleep.js";

export interface RetryPolicy {
  /** Tries in all, the first included (1 = no retry). Default 6. */
  maxAttempts: number;
  /** Backoff cap before the first retry, ms; doubles each time. Default 100. */
  baseDelayMs: number;
  /** Largest wait between tries, ms. Default 5000. */
  maxDelayMs: number;
  /** Called before each retry (logging, tests). */
  onRetry?: (info: { attempt: number; error: OnceqError; delayMs: number }) => void | Promise<void>;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 6, baseDelayMs: 100, maxDelayMs: 5000 };

/** No retries at all. */
export const NO_RETRY: RetryPolicy = { ...DEFAULT_RETRY, maxAttempts: 1 };

/**
 * The wait before retry number `attempt` (1-based): a random time up to
 * `min(maxDelayMs, baseDelayMs * 2^(attempt-1))`, or the server's
 * Retry-After when that is longer.
 */
export function retryDelay(policy: RetryPolicy, attempt: number, retryAfterMs: number | null): number {
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(Math.max(attempt - 1, 0), 20));
  return Math.max(Math.random() * cap, retryAfterMs ?? 0);
}

/** Runs `call` until it succeeds, fails for good, or attempts run out. */
export async function withRetry<T>(
  policy: RetryPolicy,
  signal: AbortSignal | undefined,
  call: () => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (e) {
      if (!(e instanceof OnceqError) || !e.retryable || attempt >= policy.maxAttempts) throw e;
      const delayMs = retryDelay(policy, attempt, e.retryAfterMs);
      await policy.onRetry?.({ attempt, error: e, delayMs });
      await sleep(delayMs, signal);
    }
  }
}
