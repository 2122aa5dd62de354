// The request ledger, framework-neutral (key 1 of the three: the request).
//
// - guard: `RequestGuard`, one request's way through the ledger, and its options.
// - store: `PgLedger` (the toolkit's SQL, statement for statement) and `migrate`.
// - fingerprint / canonical-json: what a request is, byte for byte the Rust hash.
// - key: the Idempotency-Key header's rules.
// - headers: which answer headers are recorded, and their column codec.
// - answer: refusals, 409 in flight, replays.
// - purger: `startPurger`.
// - sql: the statements, read from the package's sql/ (copied at build time).
export { type Answer, IDEMPOTENT_REPLAYED, answerFor, refusal, secondsUntil } from "./answer.js";
export { canonicalJson, formatF64 } from "./canonical-json.js";
export { fingerprint, isJson, principalOfAuthorization, scope, type BodyBytes } from "./fingerprint.js";
export {
  DEFAULT_LEASE_MS,
  DEFAULT_MAX_BODY,
  DEFAULT_MAX_RESPONSE_BODY,
  DEFAULT_RETENTION_MS,
  RequestGuard,
  type Decision,
  type Held,
  type LedgerOptions,
  type LedgerRequest,
  type Log,
} from "./guard.js";
export { type Header } from "./headers.js";
export { IDEMPOTENCY_KEY, MAX_KEY_LEN, readKey } from "./key.js";
export { startPurger, type Purger, type PurgerOptions } from "./purger.js";
export {
  LedgerError,
  PgLedger,
  migrate,
  type Claim,
  type ClaimOutcome,
  type Queryable,
  type StoredResponse,
} from "./store.js";
