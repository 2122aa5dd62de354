// Copies the toolkit's shared SQL and case tables (crates/onceq/sql/) into
// the package (clients/node/sql/, gitignored, shipped by `files`), so the
// Node ledger and worker run the very statements the Rust toolkit runs and
// the package never keeps a copy of its own in git.
import { cpSync, existsSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

const from = fileURLToPath(new URL("../../../crates/onceq/sql/", import.meta.url));
const to = fileURLToPath(new URL("../sql/", import.meta.url));

if (!existsSync(from)) {
  console.error(`copy-sql: ${from} is missing; build the package inside the onceq repository`);
  process.exit(1);
}
rmSync(to, { recursive: true, force: true });
cpSync(from, to, { recursive: true });
