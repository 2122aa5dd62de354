// Copies the shared SQL (crates/onceq/sql: the request ledger's and the job
// facts' statements per dialect, and the case tables) into ./sql, which the
// package loads at run time and ships (`files`). The package keeps no copy of
// a statement in git: ./sql is gitignored and rebuilt by every `npm run build`.
import { cpSync, existsSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const shared = join(pkg, "..", "..", "crates", "onceq", "sql");
const out = join(pkg, "sql");

if (!existsSync(join(shared, "job_fact", "postgres", "claim.sql"))) {
  throw new Error(`copy-sql: ${shared} does not hold the shared SQL`);
}
rmSync(out, { recursive: true, force: true });
cpSync(shared, out, { recursive: true });
