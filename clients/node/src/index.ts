// The package's map:
// - client/: `Client`, the queue API (key 2: the publish, retried with its key);
// - worker/: `Worker`, effects committed with the job fact (key 3: the work);
// - ledger/ (and ./express, ./hono): the Idempotency-Key request ledger (key 1).
export * from "./client/index.js";
export * from "./worker/index.js";
export * from "./ledger/index.js";
// The ledger and the job facts each have a `migrate`; here
// `migrate` creates both tables and the others are named by what they are.
export { migrate, migrateLedger, migrateJobFacts } from "./migrate.js";
export type { Claim as LedgerClaim } from "./ledger/index.js";
