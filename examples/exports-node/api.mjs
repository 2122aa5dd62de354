// `POST /api/exports`: claim the key, publish, record — never the work.
//
// The middleware does the claim and the record (key 1, the request); the
// route only publishes, with the request's key as the publish key (key 2)
// so that a rerun after a crash (a takeover of an expired claim) gets the
// first message back instead of queueing a second one. The job fact
// `export:<key>` rides in the payload for the worker (key 3).
import { randomUUID } from "node:crypto";

import express from "express";
import { Client, migrate } from "onceq";
import { idempotency, startPurger } from "onceq/express";

import { atStart, pool as makePool } from "./lib/db.mjs";
import { ledgerLog, log } from "./lib/log.mjs";
import { common, flag, text, whole } from "./lib/settings.mjs";

const env = common();
const listen = text("LISTEN", "127.0.0.1:3000");
const leaseSecs = whole("EXPORTS_LEASE_SECS", 30, 1);
// For the chaos run's teeth only: the route WITHOUT the ledger, as the seed would be without its own.
const skipLedger = flag("EXPORTS_UNSAFE_SKIP_LEDGER");

const pool = makePool(env.databaseUrl, log);
// Bounded retries: a request should answer within seconds; the caller retries with the same key anyway.
const client = new Client({
  baseUrl: env.onceqUrl,
  apiKey: env.apiKey,
  retry: { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 1000 },
});

const app = express();
if (skipLedger) {
  log.warn("serving WITHOUT the Idempotency-Key middleware (chaos teeth mode)");
  app.post("/api/exports", express.json(), createExport);
} else {
  await atStart("creating the ledger", () => migrate(pool), log);
  startPurger({ pool, every: 300_000, log: ledgerLog });
  app.post("/api/exports", idempotency({ pool, leaseMs: leaseSecs * 1000, log: ledgerLog }), createExport);
}
// The middleware's own failure (its database down) and anything thrown: a 503 to retry, never a stack.
app.use((err, _req, res, _next) => {
  log.warn("request failed", { error: String(err?.message ?? err) });
  if (!res.headersSent) res.status(err?.status >= 400 && err.status < 500 ? err.status : 503).json({ error: String(err?.message ?? err) });
});

async function createExport(req, res) {
  const body = req.body !== null && typeof req.body === "object" && !Buffer.isBuffer(req.body) ? req.body : {};
  const { tenant, format } = body;
  for (const [field, value] of [["tenant", tenant], ["format", format]]) {
    if (typeof value !== "string") {
      return res.status(400).json({
        error: { code: "BODY_INVALID", message: `${field} must be a string`, hint: 'send {"tenant": string, "format": string}' },
      });
    }
  }
  // Without the middleware (teeth mode) every request gets a fresh key, as a
  // route with no key at all would: each retry becomes a new job.
  const key = req.idempotencyKey ?? randomUUID();
  try {
    const { message } = await client.publish(env.queue, { tenant, format, job_fact: `export:${key}` }, { idempotencyKey: key });
    res.status(202).json({ status: "queued", message_id: message.message_id });
  } catch (e) {
    // A 5xx is never recorded by the middleware: the claim is released and
    // the caller's retry publishes again (deduplicated by the same key).
    log.warn("publish failed", { error: String(e?.message ?? e) });
    res.status(503).json({ error: String(e?.message ?? e) });
  }
}

const [host, port] = splitListen(listen);
const server = app.listen(port, host, () => log.info("exports api listening", { addr: `${host}:${server.address().port}` }));
const stop = () => {
  server.close(() => pool.end().finally(() => process.exit(0)));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);

function splitListen(addr) {
  const at = addr.lastIndexOf(":");
  const p = Number(addr.slice(at + 1));
  if (at < 0 || !Number.isInteger(p) || p < 0 || p > 65535) {
    console.error(`exports: LISTEN must be host:port, not ${JSON.stringify(addr)}`);
    process.exit(2);
  }
  return [addr.slice(0, at).replace(/^\[(.*)\]$/, "$1"), p];
}
