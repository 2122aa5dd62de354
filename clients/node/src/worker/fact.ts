// Job facts: what a message's work is called, and the onceq_job_facts rows
// that say who is doing it and whether it is done (the state machine is in
// docs/state-machines.md; the SQL is shared with the Rust toolkit).

import type pg from "pg";

import type { ConsumedMessage } from "../client/types.js";
import { runSchema } from "../schema.js";
import { sqlFile } from "./sql.js";

const sql = (name: string) => sqlFile(`job_fact/postgres/${name}.sql`);

/**
 * The fact a message's work is known by: `payload.job_fact` when it is a
 * non-empty string, else the publish idempotency key, else the message id.
 * The first two survive a re-publish of the same work; the message id only
 * covers redeliveries of one message.
 */
export function jobFact(message: Pick<ConsumedMessage, "payload" | "idempotency_key" | "message_id">): string {
  const p = message.payload;
  const fromPayload =
    p !== null && typeof p === "object" && !Array.isArray(p) ? (p as Record<string, unknown>).job_fact : undefined;
  if (typeof fromPayload === "string" && fromPayload !== "") return fromPayload;
  if (typeof message.idempotency_key === "string" && message.idempotency_key !== "") return message.idempotency_key;
  return message.message_id;
}

/** What a claim found (`attempts`: claims that held it, takeovers included). */
export type Claim =
  | { state: "mine"; attempts: number }
  | { state: "done"; attempts: number }
  | { state: "held"; lockedUntil: Date; attempts: number };

type Queryable = Pick<pg.ClientBase, "query">;

/**
 * Creates the job facts' table when it is missing, in one transaction (the
 * schema takes an advisory lock, so many workers starting at once are safe).
 */
export async function migrate(pool: pg.Pool): Promise<void> {
  await runSchema(pool, sql("schema"));
}

/** Claims `fact` for one attempt (`claim` is the attempt's token). */
export async function claimFact(
  db: Queryable,
  fact: string,
  owner: string,
  claim: string,
  now: Date,
  until: Date,
): Promise<Claim> {
  const r = await db.query<{ state: string; mine: boolean; locked_until: Date; attempts: number }>(sql("claim"), [
    fact,
    owner,
    claim,
    now,
    until,
  ]);
  const row = r.rows[0];
  if (!row) throw new Error("claim.sql returned no row");
  if (row.state === "done") return { state: "done", attempts: row.attempts };
  if (row.mine) return { state: "mine", attempts: row.attempts };
  return { state: "held", lockedUntil: row.locked_until, attempts: row.attempts };
}

/** Pushes the lease; false when the fact is no longer ours. */
export async function heartbeatFact(db: Queryable, fact: string, claim: string, until: Date): Promise<boolean> {
  return (await db.query(sql("heartbeat"), [fact, claim, until])).rowCount === 1;
}

/** Marks the fact done inside the caller's transaction; false when it is no longer ours. */
export async function markFactDone(tx: Queryable, fact: string, claim: string, now: Date): Promise<boolean> {
  return (await tx.query(sql("mark_done"), [fact, claim, now])).rowCount === 1;
}

/** Gives the fact up (only while it is ours and running). */
export async function releaseFact(db: Queryable, fact: string, claim: string): Promise<boolean> {
  return (await db.query(sql("release"), [fact, claim])).rowCount === 1;
}

/**
 * Deletes done facts finished before `before`; how many. Keep facts longer
 * than a message can live (the queue's retention and the publish dedupe
 * window): a fact purged too early lets a late redelivery do the work again.
 */
export async function purgeDoneFacts(db: Queryable, before: Date): Promise<number> {
  return (await db.query(sql("purge"), [before])).rowCount ?? 0;
}
