// The worker: `new Worker({ client, pool, queue, handler })`, and the job facts it keeps.
export { Worker, errorText } from "./worker.js";
export type { Job, Handler, Backoff, WorkerOptions, Outcome, Tick, WorkerMetrics } from "./worker.js";
export { jobFact, migrate, claimFact, heartbeatFact, markFactDone, releaseFact, purgeDoneFacts } from "./fact.js";
export type { Claim as FactClaim } from "./fact.js";
export { sqlDir, sqlFile } from "./sql.js";
export { consoleLogger, silentLogger } from "./logger.js";
export type { Logger, Fields } from "./logger.js";
