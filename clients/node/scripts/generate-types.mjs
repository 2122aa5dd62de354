// Generates src/client/openapi.ts from a server's /openapi.json with the
// generator CI already uses (openapi-typescript, pinned by the lockfile).
//
//   node scripts/generate-types.mjs [--url URL | --file PATH] [--out PATH]
//
// URL defaults to $ONCEQ_URL (the document is public: no key needed).
// test/openapi.test.mjs runs this against the live server into a scratch
// file and fails when the committed types differ.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const out = opt("--out") ?? join(pkg, "src", "client", "openapi.ts");
let file = opt("--file");
const scratch = mkdtempSync(join(tmpdir(), "onceq-openapi-"));
try {
  if (!file) {
    const base = opt("--url") ?? process.env.ONCEQ_URL;
    if (!base) throw new Error("generate-types: give --url, --file or set ONCEQ_URL");
    const res = await fetch(`${base.replace(/\/+$/, "")}/openapi.json`);
    if (!res.ok) throw new Error(`generate-types: GET /openapi.json answered ${res.status}`);
    file = join(scratch, "openapi.json");
    writeFileSync(file, await res.text());
  }
  const generated = join(scratch, "openapi.ts");
  const cli = join(pkg, "node_modules", "openapi-typescript", "bin", "cli.js");
  execFileSync(process.execPath, [cli, file, "-o", generated], { stdio: ["ignore", "ignore", "inherit"] });
  const banner =
    "// Generated from the server's /openapi.json by openapi-typescript\n" +
    "// (`npm run generate`); do not edit. test/openapi.test.mjs fails when a\n" +
    "// live server's document and this file disagree.\n";
  writeFileSync(out, banner + readFileSync(generated, "utf8"));
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
