// Failures of client calls: one class, branched on by `code`.

/** Codes the client itself gives when there is no server answer to report. */
export const CLIENT_CODES = {
  /** The request got no answer (connection refused or reset, DNS, TLS). */
  NETWORK: "NETWORK_ERROR",
  /** No answer within the call's timeout. */
  TIMEOUT: "TIMEOUT",
  /** The caller's AbortSignal cancelled the call. */
  ABORTED: "ABORTED",
  /** The answer was not the envelope the call expects. */
  BAD_RESPONSE: "BAD_RESPONSE",
  /** The client was used wrongly (bad queue name, key text, options). */
  INVALID_ARGUMENT: "INVALID_ARGUMENT",
} as const;

export interface OnceqErrorInit {
  code: string;
  message: string;
  status?: number;
  hint?: string | null;
  retryable?: boolean;
  requestId?: string | null;
  retryAfterMs?: number | null;
  cause?: unknown;
}

/**
 * What went wrong with a call. `code` is the server's error code
 * (`INVALID_PARAMS`, `QUEUE_NOT_FOUND`, `IDEMPOTENCY_KEY_REUSED`, …) or one
 * of {@link CLIENT_CODES} when no answer came; `status` is the HTTP status
 * (0 without an answer); `hint` the server's one sentence on what to do;
 * `retryable` whether the same call may succeed later (network errors,
 * timeouts, 429, 5xx, 409 `REQUEST_IN_FLIGHT`); `requestId` the server's
 * `metadata.request_id` (or `x-request-id` header) when it sent one.
 */
export class OnceqError extends Error {
  override readonly name = "OnceqError";
  readonly code: string;
  readonly status: number;
  readonly hint: string | null;
  readonly retryable: boolean;
  readonly requestId: string | null;
  /** The server's `Retry-After`, in milliseconds, when it sent one. */
  readonly retryAfterMs: number | null;

  constructor(init: OnceqErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = init.code;
    this.status = init.status ?? 0;
    this.hint = init.hint ?? null;
    this.retryable = init.retryable ?? false;
    this.requestId = init.requestId ?? null;
    this.retryAfterMs = init.retryAfterMs ?? null;
  }

  /** An error answer of the server (decoded envelope or bare status). */
  static fromAnswer(
    status: number,
    body: { code?: unknown; message?: unknown; hint?: unknown } | null,
    requestId: string | null,
    retryAfterMs: number | null,
  ): OnceqError {
    const code = typeof body?.code === "string" ? body.code : statusCode(status);
    const message = typeof body?.message === "string" ? body.message : `HTTP ${status}`;
    const hint = typeof body?.hint === "string" ? body.hint : null;
    const retryable = status === 429 || status >= 500 || code === "REQUEST_IN_FLIGHT";
    return new OnceqError({ code, message, status, hint, retryable, requestId, retryAfterMs });
  }
}

/** A code for an error answer without an envelope (a proxy's 502, say). */
function statusCode(status: number): string {
  if (status === 429) return "RATE_LIMITED";
  if (status >= 502 && status <= 504) return "UNAVAILABLE";
  if (status >= 500) return "INTERNAL";
  return `HTTP_${status}`;
}
