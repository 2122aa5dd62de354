// How one call goes out and comes back: the key, the idempotency key, the
// trace context, the timeout and the caller's AbortSignal, and the envelope
// back (crates/onceq/src/client/call.rs).

import { CLIENT_CODES, OnceqError } from "./errors.js";
import { aborted } from "./sleep.js";
import { injectTrace } from "./trace.js";

export interface CallOptions {
  /** Cancels the call (and its retries). */
  signal?: AbortSignal;
  /** Longest wait for the answer, ms (default the client's `timeoutMs`). */
  timeoutMs?: number;
  /**
   * Sent as `Idempotency-Key`: the server carries the call out once however
   * often it is sent, so the client retries it on transient failures.
   */
  idempotencyKey?: string;
}

/** A decoded successful answer. */
export interface Answer<T> {
  data: T;
  replay: boolean;
  costUsd: number;
  requestId: string | null;
}

export interface Request {
  method: "GET" | "POST" | "DELETE";
  path: string;
  body?: unknown;
  idempotencyKey?: string;
  signal?: AbortSignal;
  timeoutMs: number;
}

/** One try of one call. */
export async function callOnce<T>(
  fetchImpl: typeof fetch,
  base: string,
  auth: string,
  req: Request,
): Promise<Answer<T>> {
  const headers: Record<string, string> = { authorization: auth, accept: "application/json" };
  if (req.body !== undefined) headers["content-type"] = "application/json";
  if (req.idempotencyKey !== undefined) headers["idempotency-key"] = req.idempotencyKey;
  await injectTrace(headers);

  if (req.signal?.aborted) throw aborted(req.signal);
  const ctl = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ctl.abort();
  }, req.timeoutMs);
  const onAbort = () => ctl.abort();
  req.signal?.addEventListener("abort", onAbort, { once: true });
  const failed = (e: unknown): OnceqError => {
    if (req.signal?.aborted) return aborted(req.signal);
    if (timedOut) {
      return new OnceqError({
        code: CLIENT_CODES.TIMEOUT,
        message: `no answer to ${req.method} ${req.path} within ${req.timeoutMs} ms`,
        retryable: true,
        cause: e,
      });
    }
    const cause = (e as { cause?: { code?: string; message?: string } })?.cause;
    return new OnceqError({
      code: CLIENT_CODES.NETWORK,
      message: `${req.method} ${req.path}: ${cause?.code ?? cause?.message ?? String(e)}`,
      retryable: true,
      cause: e,
    });
  };
  let res: Response;
  let text: string;
  try {
    res = await fetchImpl(base + req.path, {
      method: req.method,
      headers,
      body: req.body === undefined ? undefined : JSON.stringify(req.body),
      signal: ctl.signal,
    });
    text = await res.text();
  } catch (e) {
    throw failed(e);
  } finally {
    clearTimeout(timer);
    req.signal?.removeEventListener("abort", onAbort);
  }

  let envelope: Envelope | null = null;
  try {
    envelope = JSON.parse(text) as Envelope;
  } catch {
    envelope = null;
  }
  const requestId =
    (typeof envelope?.metadata?.request_id === "string" ? envelope.metadata.request_id : null) ??
    res.headers.get("x-request-id");
  if (res.status === 200 && envelope?.ok === true && envelope.data !== undefined) {
    return {
      data: envelope.data as T,
      replay: envelope.metadata?.idempotent_replay === true,
      costUsd: typeof envelope.metadata?.cost_usd === "number" ? envelope.metadata.cost_usd : 0,
      requestId,
    };
  }
  if (res.status === 200) {
    throw new OnceqError({
      code: CLIENT_CODES.BAD_RESPONSE,
      message: `${req.method} ${req.path}: the answer is not an onceq envelope`,
      status: 200,
      requestId,
    });
  }
  const error = envelope && typeof envelope.error === "object" ? envelope.error : null;
  throw OnceqError.fromAnswer(res.status, error, requestId, retryAfter(res.headers.get("retry-after")));
}

interface Envelope {
  ok?: unknown;
  data?: unknown;
  error?: { code?: unknown; message?: unknown; hint?: unknown } | null;
  metadata?: { request_id?: unknown; idempotent_replay?: unknown; cost_usd?: unknown };
}

/** `Retry-After` in ms: delta-seconds or an HTTP date. */
function retryAfter(value: string | null): number | null {
  if (value === null) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}
