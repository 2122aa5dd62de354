// The shared SQL statements (crates/onceq/sql, copied into the package's
// sql/ directory by `npm run build` and shipped with it), read once from
// the path relative to this compiled module: dist/worker/ → ../../sql.

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = new URL("../../sql/", import.meta.url);

const cache = new Map<string, string>();

/** The text of `sql/<path>` (e.g. `job_fact/postgres/claim.sql`). */
export function sqlFile(path: string): string {
  let text = cache.get(path);
  if (text === undefined) {
    const file = fileURLToPath(new URL(path, root));
    try {
      text = readFileSync(file, "utf8");
    } catch (e) {
      throw new Error(`onceq: the package's SQL file ${file} is missing (run \`npm run build\`)`, { cause: e });
    }
    cache.set(path, text);
  }
  return text;
}

/** The package's sql/ directory (the case tables' home too). */
export const sqlDir: string = fileURLToPath(root);
