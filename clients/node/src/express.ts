// The Idempotency-Key middleware for Express, on the shared request ledger
// (the framework-neutral core in ./ledger/). Mount it on the routes it
// guards, so the route template scopes the keys:
//
//     import { idempotency, migrate } from "onceq/express";
//     await migrate(pool);
//     app.post("/api/exports", idempotency({ pool }), async (req, res) => {
//       // req.idempotencyKey: pass it on as the queue's publish key
//       res.status(202).json(await publish(req.body, req.idempotencyKey));
//     });
//
// The middleware reads the request body itself (it is fingerprinted before
// the handler runs): a JSON body becomes `req.body`, parsed; any other body
// is `req.body` as a Buffer; later body parsers see it read and skip. When
// a body parser ran first, pass `express.json({ verify: keepRawBody })` so
// the fingerprint is taken over the bytes; without them it is taken over
// the parsed value (where `1.0` and `1` are the same number).
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";

import type { NextFunction, Request, RequestHandler, Response } from "express";

import {
  type Answer,
  type BodyBytes,
  type Header,
  type Held,
  IDEMPOTENCY_KEY,
  type LedgerOptions,
  RequestGuard,
  isJson,
  principalOfAuthorization,
  refusal,
} from "./ledger/index.js";

export { migrate, startPurger, type Purger, type PurgerOptions } from "./ledger/index.js";

declare module "express-serve-static-core" {
  interface Request {
    /** The request's Idempotency-Key (the client's or a generated one), set by `idempotency()`. */
    idempotencyKey?: string;
    /** The request body's bytes, when read by `idempotency()` or kept by `keepRawBody`. */
    rawBody?: Buffer;
  }
}

/** Options of the Express middleware. */
export interface ExpressIdempotencyOptions extends LedgerOptions {
  /**
   * Who the caller is (keys are scoped by caller and route); undefined or
   * null means "anonymous". Default: SHA-256 of the Authorization header.
   */
  principal?: (req: Request) => string | undefined | null;
}

/** `express.json({ verify: keepRawBody })`: keeps the bytes the fingerprint is taken over. */
export function keepRawBody(req: IncomingMessage, _res: ServerResponse, buf: Buffer): void {
  (req as Request).rawBody = buf;
}

/** The middleware. `guard` is its core (for tests and custom adapters). */
export function idempotency(options: ExpressIdempotencyOptions): RequestHandler & { guard: RequestGuard } {
  const guard = new RequestGuard(options);
  const principal = options.principal ?? ((req: Request) => principalOfAuthorization(req.headers.authorization));
  const handler = (req: Request, res: Response, next: NextFunction) => {
    run(req, res, next).catch(next);
  };
  const run = async (req: Request, res: Response, next: NextFunction) => {
    const route = `${req.baseUrl}${typeof req.route?.path === "string" ? req.route.path : req.path}`;
    const d = await guard.decide({
      method: req.method,
      route,
      keyValues: req.headersDistinct[IDEMPOTENCY_KEY],
      contentType: req.headers["content-type"],
      principal: principal(req) ?? undefined,
      body: (max) => readBody(req, max),
    });
    if (d.kind === "pass") return next();
    if (d.kind === "answer") return send(res, d.answer);
    req.idempotencyKey = d.key;
    res.locals.idempotencyKey = d.key;
    if (d.generated) res.setHeader("Idempotency-Key", d.key);
    capture(res, guard.maxResponseBody, d.held, d.generated);
    next();
  };
  return Object.assign(handler, { guard });
}

/** Sends an answer of the core's (a refusal or a replay). */
function send(res: Response, a: Answer): void {
  res.status(a.status);
  const byName = new Map<string, string[]>();
  for (const [n, v] of a.headers) byName.set(n, [...(byName.get(n) ?? []), v]);
  for (const [n, vs] of byName) res.setHeader(n, vs.length === 1 ? (vs[0] as string) : vs);
  res.end(a.body);
}

/** The body's bytes (reading the stream when no one has), or a refusal. */
async function readBody(req: Request, max: number): Promise<BodyBytes | Answer> {
  if (req.rawBody) return { bytes: req.rawBody };
  // A body parser ran first and kept no bytes: only the parsed value is left.
  if ((req as { _body?: boolean })._body || req.readableEnded) {
    if (Buffer.isBuffer(req.body)) return { bytes: req.body };
    if (typeof req.body === "string") return { bytes: Buffer.from(req.body) };
    return { parsed: req.body ?? null };
  }
  const tooLarge = () =>
    refusal(413, "PAYLOAD_TOO_LARGE", `the request body is over ${max} bytes`, "send a smaller body");
  const declared = Number(req.headers["content-length"]);
  if (declared > max) return tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > max) return tooLarge();
      chunks.push(chunk);
    }
  } catch {
    return refusal(400, "BODY_UNREADABLE", "the request body could not be read", "send the request again");
  }
  const bytes = Buffer.concat(chunks);
  req.rawBody = bytes;
  // Later body parsers skip a body already read (body-parser's flag).
  (req as { _body?: boolean })._body = true;
  if (isJson(req.headers["content-type"])) {
    if (bytes.length === 0) {
      req.body = {};
    } else {
      try {
        req.body = JSON.parse(bytes.toString("utf8"));
      } catch {
        return refusal(400, "BODY_INVALID_JSON", "the request body is not valid JSON", "send a JSON document as the body");
      }
    }
  } else {
    req.body = bytes;
  }
  return { bytes };
}

/**
 * Watches the handler's answer: every chunk written is passed on and a
 * copy kept (up to `max` bytes); at `end` the answer is settled with the
 * ledger — recorded, or the claim released — before the last chunk goes
 * out, so a client that got the answer and retries gets the replay.
 */
function capture(res: Response, max: number, held: Held, generated: boolean): void {
  const out = res as ServerResponse;
  const write = out.write;
  const end = out.end;
  const writeHead = out.writeHead;
  const chunks: Buffer[] = [];
  let size = 0;
  let whole = true;
  const keep = (chunk: unknown, encoding: unknown) => {
    if (chunk === undefined || chunk === null || typeof chunk === "function" || !whole) return;
    const b =
      typeof chunk === "string"
        ? Buffer.from(chunk, typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8")
        : Buffer.from(chunk as Uint8Array);
    size += b.length;
    if (size > max) {
      whole = false;
      chunks.length = 0;
    } else {
      chunks.push(b);
    }
  };
  // Headers given to writeHead directly never show in getHeaders(); set
  // them first so they are recorded.
  out.writeHead = function (this: ServerResponse, status: number, ...rest: unknown[]) {
    const headers = rest.find((r) => typeof r === "object" && r !== null) as OutgoingHttpHeaders | unknown[] | undefined;
    if (!this.headersSent && headers !== undefined) {
      if (Array.isArray(headers)) {
        for (let i = 0; i + 1 < headers.length; i += 2) this.appendHeader(String(headers[i]), String(headers[i + 1]));
      } else {
        for (const [n, v] of Object.entries(headers)) if (v !== undefined) this.setHeader(n, v);
      }
    }
    const reason = rest.find((r) => typeof r === "string");
    return reason === undefined
      ? writeHead.call(this, status)
      : (writeHead as (s: number, r: string) => ServerResponse).call(this, status, reason as string);
  } as typeof out.writeHead;
  out.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    keep(chunk, rest[0]);
    return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof out.write;
  out.end = function (this: ServerResponse, ...args: unknown[]) {
    out.write = write;
    out.end = end;
    out.writeHead = writeHead;
    const [chunk, encoding] = args;
    keep(chunk, encoding);
    const headers: Header[] = [];
    for (const name of this.getHeaderNames()) {
      const v = this.getHeader(name);
      // A generated key's echo is the middleware's, not the handler's (as in the Rust layer).
      if (name === IDEMPOTENCY_KEY && generated) continue;
      for (const one of Array.isArray(v) ? v : [v]) if (one !== undefined) headers.push([name, String(one)]);
    }
    held
      .settle({ status: this.statusCode, headers, body: whole ? Buffer.concat(chunks) : undefined })
      .finally(() => (end as (...a: unknown[]) => void).apply(this, args));
    return this;
  } as typeof out.end;
}
