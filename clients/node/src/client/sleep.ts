// A timer an AbortSignal cuts short.

import { CLIENT_CODES, OnceqError } from "./errors.js";

/** Waits `ms`; rejects with an ABORTED OnceqError when `signal` fires first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(aborted(signal));
    const done = () => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(aborted(signal!));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export function aborted(signal: AbortSignal): OnceqError {
  return new OnceqError({ code: CLIENT_CODES.ABORTED, message: "the call was aborted", cause: signal.reason });
}
