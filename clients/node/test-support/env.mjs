// What the package's tests share: the environment the Rust harness
// (crates/onceq-cli/tests/it/node_package.rs) gives them, a client, an
// application pool, fresh queue names, and a tiny HTTP proxy that fails the
// first requests (a test double for a network fault) and forwards the rest.
// Kept outside test/ so that node's test runner does not run it as a test.
import { randomUUID } from "node:crypto";
import http from "node:http";

import pg from "pg";

import { Client, silentLogger } from "../dist/index.js";

function required(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run the tests through the harness or set it (see README)`);
  return v;
}

export const ONCEQ_URL = required("ONCEQ_URL");
export const ONCEQ_API_KEY = required("ONCEQ_API_KEY");
export const DATABASE_URL = required("DATABASE_URL");

export const quiet = silentLogger;

export function client(opts = {}) {
  return new Client({ baseUrl: ONCEQ_URL, apiKey: ONCEQ_API_KEY, ...opts });
}

export function queueName(prefix = "t") {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

export function pool() {
  return new pg.Pool({ connectionString: DATABASE_URL, max: 12 });
}

/**
 * A proxy in front of `target`. `fault(req, n)` (n = 1-based request count)
 * may answer instead of forwarding: return `{status, headers, body}`, "drop"
 * to reset the connection, or "forward-then-drop" to let the server carry
 * the request out and lose its answer. Every request seen is in `seen`.
 */
export async function proxy(target, fault = () => null, port = 0) {
  const seen = [];
  const server = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    const entry = { method: req.method, path: req.url, headers: req.headers, body: body.toString() };
    seen.push(entry);
    const f = await fault(entry, seen.length);
    if (f === "drop") return req.socket.destroy();
    const forwardThenDrop = f === "forward-then-drop";
    if (f && !forwardThenDrop) {
      res.writeHead(f.status, { "content-type": "application/json", ...f.headers });
      return res.end(f.body ?? "");
    }
    const headers = { ...req.headers };
    delete headers.host;
    delete headers["content-length"];
    const up = await fetch(target + req.url, {
      method: req.method,
      headers,
      body: req.method === "GET" || req.method === "HEAD" ? undefined : body,
    });
    const text = await up.text();
    if (forwardThenDrop) return req.socket.destroy();
    const out = {};
    up.headers.forEach((v, k) => {
      if (k !== "content-length" && k !== "transfer-encoding" && k !== "content-encoding") out[k] = v;
    });
    res.writeHead(up.status, out);
    res.end(text);
  });
  await new Promise((r) => server.listen(port, "127.0.0.1", r));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    port: server.address().port,
    seen,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

/** A port nothing listens on (yet). */
export async function freePort() {
  const s = http.createServer();
  await new Promise((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

/** Polls `check` until it returns a truthy value (state the server moves on its own clock). */
export async function eventually(check, { timeoutMs = 10_000, everyMs = 50 } = {}) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > until) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** How many long polls the server counts as waiting (its /metrics gauge). */
export async function longPollsWaiting() {
  const text = await (await fetch(`${ONCEQ_URL}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith("onceq_long_polls_waiting "));
  if (!line) throw new Error(`no onceq_long_polls_waiting in /metrics:\n${text}`);
  return Number(line.split(" ")[1]);
}

/** An error envelope as the server writes one. */
export function errorBody(code, message, status) {
  return {
    status,
    body: JSON.stringify({
      ok: false,
      data: null,
      error: { code, message, hint: "retry after Retry-After", retryable: true },
      metadata: { request_id: "test-proxy", latency_ms: 0, cost_usd: 0, idempotent_replay: false },
    }),
  };
}
