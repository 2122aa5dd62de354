// Shared by the ledger's tests (no tests of its own): a pool on a schema
// of its own in the suite's app database (DATABASE_URL), so test files and
// cases never see each other's entries, and a clock the tests move.
import { randomBytes } from "node:crypto";

import pg from "pg";

import { migrate } from "../dist/ledger/index.js";

/** A pool whose connections use a fresh schema, with the ledger table migrated. */
export async function freshLedgerPool() {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error("DATABASE_URL must name an empty application database (the harness sets it)");
  const schema = `ledger_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const pool = new pg.Pool({ connectionString: url, options: `-c search_path=${schema}`, max: 8 });
  await migrate(pool);
  return {
    pool,
    schema,
    async close() {
      await pool.query(`DROP SCHEMA ${schema} CASCADE`);
      await pool.end();
    },
  };
}

/** A clock at `start` that moves only when told. */
export function testClock(start = new Date("2026-01-01T00:00:00Z")) {
  let t = start.getTime();
  return {
    now: () => new Date(t),
    advance(ms) {
      t += ms;
    },
  };
}

/** A gate a handler waits on until the test opens it. */
export function gate() {
  let open;
  const opened = new Promise((r) => (open = r));
  return { opened, open: () => open() };
}

/** POST `body` (a string: sent as is) to `url` with headers; the answer, body as text. */
export async function post(url, { key, body = "{}", headers = {} } = {}) {
  const h = { "content-type": "application/json", ...headers };
  if (key !== undefined) h["idempotency-key"] = key;
  const res = await fetch(url, { method: "POST", headers: h, body });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** The refusal's error object, checked for its shape (code, message, hint). */
export function errorOf(answer) {
  const { error } = JSON.parse(answer.text);
  for (const f of ["code", "message", "hint"]) {
    if (typeof error?.[f] !== "string") throw new Error(`refusal without ${f}: ${answer.text}`);
  }
  return error;
}
