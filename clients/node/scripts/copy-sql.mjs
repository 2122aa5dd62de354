// Copies the toolkit's shared SQL and case tables (crates/onceq/sql/) into
// the package (clients/node/sql/, gitignored, shipped by `files`), so the
// Node ledger and worker run the very statements the Rust toolkit runs and
// the package never keeps a copy of its own in git.
//
// Until the move of the statements to crates/onceq/sql/ lands (issue 24
// part 1), they are taken from where they live today, under the names the
// contract gives them (sql/ledger/<dialect>/, sql/job_fact/postgres/).
import { cpSync, existsSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const crate = here("../../../crates/onceq/");
const out = here("../sql/");

const shared = `${crate}sql/`;
const sources = existsSync(shared)
  ? [[shared, out]]
  : [
      [`${crate}src/idempotency/sql/`, `${out}ledger/`],
      [`${crate}src/worker/sql/`, `${out}job_fact/postgres/`],
    ];

rmSync(out, { recursive: true, force: true });
for (const [from, to] of sources) {
  if (!existsSync(from)) {
    console.error(`copy-sql: ${from} is missing; run the build inside the onceq repository`);
    process.exit(1);
  }
  cpSync(from, to, { recursive: true, filter: (p) => !p.endsWith(".rs") });
}
