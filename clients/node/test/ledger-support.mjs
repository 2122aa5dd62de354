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
