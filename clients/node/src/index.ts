// The package's map:
// - client/: `Client`, the queue API (key 2: the publish, retried with its key);
// - worker/: `Worker`, effects committed with the job fact (key 3: the work);
// - ledger/ (and ./express, ./hono): the Idempotency-Key request ledger (key 1).
export * from "./client/index.js";
export * from "./worker/index.js";
// The request ledger's exports (src/ledger/, written beside this module) join here:
// export * from "./ledger/index.js";
