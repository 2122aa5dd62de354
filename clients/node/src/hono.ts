// The Idempotency-Key middleware for Hono, on the same core as the Express
// one (./ledger/): the adapter only turns a Hono context into a ledger
// request and the core's answers into Responses.
//
//     import { idempotency } from "onceq/hono";
//     app.post("/api/exports", idempotency({ pool }), async (c) =>
//       c.json(await publish(await c.req.json(), c.get("idempotencyKey")), 202));
import type { IncomingMessage } from "node:http";

import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";

import {
  type Answer,
  type BodyBytes,
  IDEMPOTENCY_KEY,
  type LedgerOptions,
  RequestGuard,
  principalOfAuthorization,
  refusal,
} from "./ledger/index.js";

export { migrate, startPurger, type Purger, type PurgerOptions } from "./ledger/index.js";

/** Options of the Hono middleware. */
export interface HonoIdempotencyOptions extends LedgerOptions {
  /** Who the caller is; undefined or null means "anonymous". Default: SHA-256 of Authorization. */
  principal?: (c: Context) => string | undefined | null;
}

/** What the middleware sets on the context: `c.get("idempotencyKey")`. */
export type IdempotencyVariables = { idempotencyKey: string };

/** The middleware. `guard` is its core. */
export function idempotency(
  options: HonoIdempotencyOptions,
): MiddlewareHandler<{ Variables: IdempotencyVariables }> & { guard: RequestGuard } {
  const guard = new RequestGuard(options);
  const principal = options.principal ?? ((c: Context) => principalOfAuthorization(c.req.header("authorization")));
  const mw: MiddlewareHandler<{ Variables: IdempotencyVariables }> = async (c, next) => {
    const d = await guard.decide({
      method: c.req.method,
      // The handler's route template, wherever the middleware is mounted.
      // (the last matched route is the handler's; hono/route since 4.8).
      route: matchedRoutes(c).at(-1)?.path || c.req.path,
      keyValues: keyValues(c),
      contentType: c.req.header("content-type"),
      principal: principal(c) ?? undefined,
      body: (max) => readBody(c, max),
    });
    if (d.kind === "pass") return next();
    if (d.kind === "answer") return toResponse(d.answer);
    c.set("idempotencyKey", d.key);
    try {
      await next();
    } catch (e) {
      await d.held.release("the handler failed");
      throw e;
    }
    // Hono turns a thrown handler into a 500 in c.res: released below.
    const res = c.res;
    const body = res.status >= 500 ? undefined : await readUpTo(res, guard.maxResponseBody);
    await d.held.settle({ status: res.status, headers: res.headers, body: body?.whole });
    const headers = new Headers(res.headers);
    if (d.generated) headers.set("Idempotency-Key", d.key);
    const nullBody = res.status === 204 || res.status === 304;
    c.res = new Response(nullBody ? null : body ? (body.whole ?? body.stream) : res.body, {
      status: res.status,
      statusText: res.statusText,
      headers,
    });
  };
  return Object.assign(mw, { guard });
}

/** Every value of the header: the Node request's when served by @hono/node-server. */
function keyValues(c: Context): readonly string[] | undefined {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (incoming?.headersDistinct) return incoming.headersDistinct[IDEMPOTENCY_KEY];
  const v = c.req.header(IDEMPOTENCY_KEY);
  return v === undefined ? undefined : [v];
}

/** The body's bytes, kept in Hono's body cache so the handler can read it again. */
async function readBody(c: Context, max: number): Promise<BodyBytes | Answer> {
  const tooLarge = () =>
    refusal(413, "PAYLOAD_TOO_LARGE", `the request body is over ${max} bytes`, "send a smaller body");
  if (Number(c.req.header("content-length")) > max) return tooLarge();
  const stream = c.req.raw.body;
  if (stream === null) return { bytes: new Uint8Array() };
  const read = await readStream(stream, max);
  if (read === "error") {
    return refusal(400, "BODY_UNREADABLE", "the request body could not be read", "send the request again");
  }
  if (read.whole === undefined) {
    await read.stream.cancel().catch(() => {});
    return tooLarge();
  }
  const bytes = read.whole;
  // Hono's cache holds promises (its type says values).
  const copy = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer;
  (c.req.bodyCache as Record<string, unknown>).arrayBuffer = Promise.resolve(copy);
  return { bytes };
}

/** A response body read whole (within `max`), or the stream to pass on. */
async function readUpTo(res: Response, max: number): Promise<{ whole?: Buffer; stream: ReadableStream<Uint8Array> | null }> {
  if (res.body === null) return { whole: Buffer.alloc(0), stream: null };
  const read = await readStream(res.body, max);
  // A failing body is the handler's failure: not recorded, sent as it is.
  if (read === "error") return { stream: null };
  return read;
}

/**
 * Reads `stream` while it stays within `max` bytes. Past that, the chunks
 * read so far and the rest are given back as one stream.
 */
async function readStream(
  stream: ReadableStream<Uint8Array>,
  max: number,
): Promise<{ whole?: Buffer; stream: ReadableStream<Uint8Array> } | "error"> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        const whole = Buffer.concat(chunks);
        return { whole, stream: new Blob([whole]).stream() };
      }
      chunks.push(value);
      size += value.length;
      if (size > max) {
        const rest = new ReadableStream<Uint8Array>({
          start(ctl) {
            for (const ch of chunks) ctl.enqueue(ch);
          },
          async pull(ctl) {
            const r = await reader.read();
            if (r.done) ctl.close();
            else ctl.enqueue(r.value);
          },
          cancel: (why) => reader.cancel(why),
        });
        return { stream: rest };
      }
    }
  } catch {
    return "error";
  }
}

function toResponse(a: Answer): Response {
  const headers = new Headers();
  for (const [n, v] of a.headers) headers.append(n, v);
  const empty = a.status === 204 || a.status === 304;
  return new Response(empty ? null : a.body, { status: a.status, headers });
}
