// Runs a schema script (the ledger's or the job facts' schema.sql) in one
// transaction on a connection of its own.
import type pg from "pg";

/**
 * Runs `script` between BEGIN and COMMIT on a checked-out connection. That
 * connection hears its own "error" events while it is out: pg emits one
 * when the connection breaks (a database restart as a process starts), and
 * with no listener it would end the process instead of failing the call.
 */
export async function runSchema(pool: pg.Pool, script: string): Promise<void> {
  const db = await pool.connect();
  let broken: Error | undefined;
  const lost = (e: Error) => {
    broken = e;
  };
  db.on("error", lost);
  try {
    await db.query("BEGIN");
    await db.query(script);
    await db.query("COMMIT");
  } catch (e) {
    await db.query("ROLLBACK").catch(() => {});
    throw e;
  } finally {
    db.off("error", lost);
    db.release(broken);
  }
}
