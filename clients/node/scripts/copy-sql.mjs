// Copies the shared SQL (crates/onceq/sql: the request ledger's and the job
// facts' statements per dialect, and the case tables) into ./sql, which the
// package loads at run time and ships (`files`). The package keeps no copy of
// a statement in git: ./sql is gitignored and rebuilt by every `npm run build`.
//
// Until the statements move to crates/onceq/sql (issue 24 part 1), they are
// taken from where the Rust toolkit keeps them today, into the same layout.
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const crate = join(pkg, "..", "..", "crates", "onceq");
const out = join(pkg, "sql");
const shared = join(crate, "sql");

rmSync(out, { recursive: true, force: true });
if (existsSync(shared)) {
  cpSync(shared, out, { recursive: true });
} else {
  const legacy = [
    [join(crate, "src", "worker", "sql"), join(out, "job_fact", "postgres")],
    [join(crate, "src", "idempotency", "sql", "postgres"), join(out, "ledger", "postgres")],
    [join(crate, "src", "idempotency", "sql", "sqlite"), join(out, "ledger", "sqlite")],
  ];
  for (const [from, to] of legacy) {
    if (!existsSync(from)) throw new Error(`copy-sql: neither ${shared} nor ${from} exists`);
    mkdirSync(to, { recursive: true });
    for (const f of readdirSync(from).filter((f) => f.endsWith(".sql"))) {
      cpSync(join(from, f), join(to, f));
    }
  }
}
if (!existsSync(join(out, "job_fact", "postgres", "claim.sql"))) {
  throw new Error("copy-sql: sql/job_fact/postgres/claim.sql is missing after the copy");
}
