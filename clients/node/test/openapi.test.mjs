// The committed types (src/client/openapi.ts) are what openapi-typescript
// makes of the live server's /openapi.json: regenerated here with the same
// script as `npm run generate`, into a scratch file, and compared.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "node:test";
import { fileURLToPath } from "node:url";

import { ONCEQ_URL } from "../test-support/env.mjs";

const pkg = fileURLToPath(new URL("..", import.meta.url));

test("src/client/openapi.ts matches the server's /openapi.json (else run `npm run generate`)", () => {
  const dir = mkdtempSync(join(tmpdir(), "onceq-types-"));
  try {
    const out = join(dir, "openapi.ts");
    execFileSync(process.execPath, [join(pkg, "scripts/generate-types.mjs"), "--url", ONCEQ_URL, "--out", out]);
    const fresh = readFileSync(out, "utf8");
    const committed = readFileSync(join(pkg, "src/client/openapi.ts"), "utf8");
    assert.ok(fresh.includes('"/v1/queue/publish"'), "the generator ran on the real document");
    if (fresh !== committed) {
      const a = fresh.split("\n");
      const b = committed.split("\n");
      const i = a.findIndex((line, n) => line !== b[n]);
      assert.fail(
        `the server's /openapi.json and src/client/openapi.ts disagree from line ${i + 1}:\n` +
          `  server:    ${a[i]}\n  committed: ${b[i]}\nrun \`ONCEQ_URL=… npm run generate\` and commit the result`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
