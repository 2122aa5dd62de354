// The ledger's statements: the Rust toolkit's own .sql files, copied into
// the package at build time (scripts/copy-sql.mjs) and read from there at
// runtime, relative to this compiled module (dist/ledger/ → sql/).
import { readFileSync } from "node:fs";

const dir = new URL("../../sql/ledger/postgres/", import.meta.url);
const read = (name: string) => readFileSync(new URL(`${name}.sql`, dir), "utf8");

/** The statements, by the names the Rust toolkit gives them. */
export const SQL = {
  schema: read("schema"),
  claim: read("claim"),
  select: read("select"),
  complete: read("complete"),
  release: read("release"),
  purge: read("purge"),
} as const;
