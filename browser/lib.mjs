// Shared by the browser test and the screenshots: Debian's Chromium,
// headless, with a fresh empty profile; and a tiny client of onceq's API.
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";

/** Launches Chromium (never downloads one) and returns { context, page, close }. */
export async function launch({ colorScheme = "light", width = 1280, height = 860 } = {}) {
  const profile = mkdtempSync(join(tmpdir(), "onceq-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: { width, height },
    colorScheme,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Polls `check` (sync or async) until it returns a truthy value, or fails
 * after `ms` naming `what`. Used instead of sleeping. */
export async function waitFor(what, check, ms = 20000) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
      last = v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what} (last: ${last})`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Calls onceq's API and returns `data`, failing on any error envelope. */
export function client(base, key) {
  return async function call(method, path, body) {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json();
    if (!json.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json.error)}`);
    return json.data;
  };
}
