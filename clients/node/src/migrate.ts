// One call that creates every table the package keeps in the application's
// database: the request ledger (key 1) and the job facts (key 3). Each is
// also reachable alone, for an app that uses only one of them.
import type pg from "pg";

import { migrate as migrateLedger } from "./ledger/index.js";
import { migrate as migrateJobFacts } from "./worker/index.js";

export { migrateLedger, migrateJobFacts };

/**
 * Creates the request ledger's and the job facts' tables when missing; safe
 * when many processes start at once (each schema takes an advisory lock).
 */
export async function migrate(pool: pg.Pool): Promise<void> {
  await migrateLedger(pool);
  await migrateJobFacts(pool);
}
