// The request ledger in PostgreSQL (table `onceq_request_ledger`): the
// Rust `PgLedger`, statement for statement. Every call takes `now` from the
// caller's clock, never the database's, so tests move time instead of
// sleeping.
import type pg from "pg";

import { runSchema } from "../schema.js";
import { decodeHeaders, encodeHeaders, type Header } from "./headers.js";
import { SQL } from "./sql.js";

/** One attempt to claim a key. */
export interface Claim {
  /** principal + method + route; keys are unique only within a scope. */
  scope: string;
  key: string;
  /** 32 bytes: what was asked (method, route, canonical body). */
  fingerprint: Uint8Array;
  /** Names this claim; complete and release act only while it holds. */
  token: string;
  /** The lease: until then a retry is told the request is in flight. */
  lockedUntil: Date;
  /** After this the entry counts as absent and may be purged. */
  expiresAt: Date;
}

/** A recorded answer (status below 500). */
export interface StoredResponse {
  status: number;
  headers: Header[];
  body: Buffer;
}

/** What a claim found. */
export type ClaimOutcome =
  | { outcome: "claimed" }
  | { outcome: "mismatch" }
  | { outcome: "in_flight"; lockedUntil: Date }
  | { outcome: "completed"; response: StoredResponse };

/** A ledger call failed (the layer answers 503 and logs the cause). */
export class LedgerError extends Error {
  override name = "LedgerError";
}

/**
 * How often claim + read is retried when the entry keeps changing under
 * it; each retry means another request won a race, so a few are plenty.
 */
const CLAIM_ATTEMPTS = 4;
/** Rows one purge statement deletes at most. */
export const PURGE_BATCH = 1000;

/** Anything with pg's `query`: a `pg.Pool` or a checked-out client. */
export type Queryable = Pick<pg.Pool, "query">;

/**
 * Creates the ledger's table if missing, from the toolkit's schema.sql
 * (safe when many processes start at once: the schema takes an advisory
 * lock for the transaction).
 */
export async function migrate(pool: pg.Pool): Promise<void> {
  await runSchema(pool, SQL.schema);
}

/** The request ledger on a pool. */
export class PgLedger {
  constructor(readonly pool: Queryable) {}

  async claim(c: Claim, now: Date): Promise<ClaimOutcome> {
    const fp = Buffer.from(c.fingerprint);
    for (let i = 0; i < CLAIM_ATTEMPTS; i++) {
      const claimed = await this.q(SQL.claim, [
        c.scope,
        c.key,
        fp,
        c.token,
        c.lockedUntil,
        now,
        c.expiresAt,
      ]);
      if (claimed.rows.length > 0) return { outcome: "claimed" };
      // Not claimed: read what holds the key. Another request may change
      // or delete the entry in between; then claim again.
      const row = (await this.q(SQL.select, [c.scope, c.key])).rows[0];
      if (row === undefined) continue;
      const judged = judge(row, fp, now);
      if (judged) return judged;
    }
    throw new LedgerError("the entry kept changing during the claim");
  }

  /** Records the answer of the claim named `token`; false when it no longer holds. */
  async complete(scope: string, key: string, token: string, r: StoredResponse, now: Date): Promise<boolean> {
    const res = await this.q(SQL.complete, [scope, key, token, r.status, encodeHeaders(r.headers), r.body, now]);
    return res.rowCount === 1;
  }

  /** Forgets the claim named `token` so a retry runs at once; false when it no longer holds. */
  async release(scope: string, key: string, token: string): Promise<boolean> {
    const res = await this.q(SQL.release, [scope, key, token]);
    return res.rowCount === 1;
  }

  /** One purge statement: deletes up to `limit` entries past their retention. */
  async purgeBatch(now: Date, limit: number): Promise<number> {
    return (await this.q(SQL.purge, [now, limit])).rowCount ?? 0;
  }

  /** Deletes every entry past its retention, a batch at a time; returns how many. */
  async purgeExpired(now: Date): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.purgeBatch(now, PURGE_BATCH);
      total += n;
      if (n < PURGE_BATCH) return total;
    }
  }

  private async q(text: string, values: unknown[]): Promise<pg.QueryResult> {
    try {
      return await this.pool.query(text, values);
    } catch (e) {
      throw new LedgerError(`request ledger: ${(e as Error).message}`, { cause: e });
    }
  }
}

interface Row {
  fingerprint: Buffer;
  status: number | null;
  headers: string | null;
  body: Buffer | null;
  locked_until: Date | null;
  expires_at: Date;
}

/**
 * What an entry the claim did not take means at `now` (the Rust
 * `Entry::judge`); undefined when it changed between the claim and the
 * read (expired, lease over) and the claim should be tried again.
 */
function judge(row: Row, fingerprint: Buffer, now: Date): ClaimOutcome | undefined {
  if (row.expires_at <= now) return undefined;
  if (!fingerprint.equals(row.fingerprint)) return { outcome: "mismatch" };
  if (row.status !== null) {
    return {
      outcome: "completed",
      response: { status: row.status, headers: decodeHeaders(row.headers ?? "[]"), body: row.body ?? Buffer.alloc(0) },
    };
  }
  if (row.locked_until !== null && row.locked_until > now) {
    return { outcome: "in_flight", lockedUntil: row.locked_until };
  }
  return undefined;
}
