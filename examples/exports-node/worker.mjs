// The worker: builds each export once, whatever the queue redelivers.
//
// The handler writes its one `exports` row through the transaction the
// package's Worker gives it; the Worker marks the job fact `done` in the
// same transaction, so the row and the fact commit together or not at all
// (key 3, the work). SIGTERM/SIGINT: finish or release what is held, exit.
import { setTimeout as sleep } from "node:timers/promises";

import { Client, Worker, migrate } from "onceq";

import { atStart, ensureExportsTable, pool as makePool } from "./lib/db.mjs";
import { log } from "./lib/log.mjs";
import { runNaive } from "./lib/naive.mjs";
import { common, flag, whole } from "./lib/settings.mjs";

const env = common();
const concurrency = whole("WORKER_CONCURRENCY", 8, 1);
const visibilitySecs = whole("WORKER_VISIBILITY_SECS", 30, 1);
const factLeaseSecs = whole("WORKER_FACT_LEASE_SECS", 60, 1);
const heartbeatMs = whole("WORKER_HEARTBEAT_MS", Math.floor((visibilitySecs * 1000) / 3), 1);
// Pretend building an export takes this long (the chaos run makes leases shorter than the work).
const workMs = whole("EXPORTS_WORK_MS", 0);
// For the chaos run's teeth only: the seed's worker without job facts (work, then ack).
const naive = flag("EXPORTS_UNSAFE_NAIVE_WORKER");

const pool = makePool(env.databaseUrl, log);
const client = new Client({ baseUrl: env.onceqUrl, apiKey: env.apiKey });
await atStart("creating the exports table", () => ensureExportsTable(pool), log);

if (naive) {
  log.warn("running the naive worker WITHOUT job facts (chaos teeth mode)");
  await runNaive({ client, pool, queue: env.queue, visibilitySecs, workMs, log });
} else {
  await atStart("creating the job facts", () => migrate(pool), log);
  const worker = new Worker({
    client,
    pool,
    queue: env.queue,
    concurrency,
    visibilityTimeout: visibilitySecs,
    factLeaseMs: factLeaseSecs * 1000,
    heartbeatMs,
    logger: log,
    async handler(job, tx) {
      if (workMs > 0) await sleep(workMs, undefined, { signal: job.signal });
      const { tenant, format } = job.payload ?? {};
      await tx.query("INSERT INTO exports (job_fact, tenant, format) VALUES ($1, $2, $3)", [
        job.fact,
        typeof tenant === "string" ? tenant : null,
        typeof format === "string" ? format : null,
      ]);
    },
  });
  log.info("exports worker running", { queue: env.queue, worker_id: worker.workerId });
  await worker.run();
  log.info("exports worker stopped", worker.metrics());
}
await pool.end();
