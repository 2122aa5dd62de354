//! The call ledger (`Store::ledger_*`): the shared request ledger's
//! statements (`crates/onceq/sql/ledger/sqlite/`) in the store's file,
//! scoped as `rules/ledger.rs` says. Every call runs on the writer thread,
//! so a claim and its read see one state.

use jiff::Timestamp;
use rusqlite::{Connection, OptionalExtension, params};

use super::time;
use crate::rules::ledger::{self, CLAIM_ATTEMPTS, Entry, contended};
use crate::{
    LedgerAnswer, LedgerClaim, LedgerClaimOutcome, LedgerComplete, LedgerRelease, LedgerUsage,
    Result,
};

/// A statement of the shared ledger, by name.
macro_rules! shared {
    ($name:literal) => {
        include_str!(concat!(
            env!("OUT_DIR"),
            "/onceq/sql/ledger/sqlite/",
            $name,
            ".sql"
        ))
    };
}

/// `Store::ledger_claim`.
pub(super) fn claim(conn: &Connection, p: &LedgerClaim) -> Result<LedgerClaimOutcome> {
    let scope = ledger::scope(&p.key);
    let key = &p.key.key;
    for _ in 0..CLAIM_ATTEMPTS {
        let claimed = conn
            .prepare_cached(shared!("claim"))?
            .query_row(
                params![
                    scope,
                    key,
                    p.fingerprint.as_slice(),
                    p.token,
                    time::micros(p.locked_until),
                    time::micros(p.now),
                    time::micros(p.expires_at)
                ],
                |_| Ok(()),
            )
            .optional()?;
        if claimed.is_some() {
            return Ok(LedgerClaimOutcome::Claimed);
        }
        type Row = (Vec<u8>, Option<i64>, Option<String>, Option<Vec<u8>>);
        let read = conn
            .prepare_cached(shared!("select"))?
            .query_row(params![scope, key], |r| {
                let row: Row = (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?);
                Ok((row, time::get_opt(r, 4)?, time::get(r, 5)?))
            })
            .optional()?;
        let Some(((fingerprint, status, headers, body), locked_until, expires_at)) = read else {
            continue;
        };
        let answer = match status {
            Some(status) => Some(LedgerAnswer {
                status: u16::try_from(status).unwrap_or(500),
                headers: ledger::headers_from_json(headers.as_deref())?,
                body: body.unwrap_or_default(),
            }),
            None => None,
        };
        let entry = Entry {
            fingerprint,
            answer,
            locked_until,
            expires_at,
        };
        if let Some(verdict) = entry.judge(&p.fingerprint, p.now) {
            return Ok(ledger::outcome(verdict));
        }
    }
    Err(contended())
}

/// `Store::ledger_complete`.
pub(super) fn complete(conn: &Connection, p: &LedgerComplete) -> Result<bool> {
    let n = conn.prepare_cached(shared!("complete"))?.execute(params![
        ledger::scope(&p.key),
        p.key.key,
        p.token,
        i64::from(p.answer.status),
        ledger::headers_json(&p.answer),
        p.answer.body,
        time::micros(p.now)
    ])?;
    Ok(n > 0)
}

/// `Store::ledger_release`.
pub(super) fn release(conn: &Connection, p: &LedgerRelease) -> Result<bool> {
    let n = conn.prepare_cached(shared!("release"))?.execute(params![
        ledger::scope(&p.key),
        p.key.key,
        p.token
    ])?;
    Ok(n > 0)
}

/// `Store::ledger_purge`: one `purge.sql`, at most `limit` entries, so the
/// writer is never held long (the purger calls again while batches fill).
pub(super) fn purge(conn: &Connection, now: Timestamp, limit: u32) -> Result<u64> {
    let n = conn
        .prepare_cached(shared!("purge"))?
        .execute(params![time::micros(now), i64::from(limit)])?;
    Ok(n as u64)
}

/// `Store::ledger_usage`: `ledger_usage.sql` on a reader (migration V19's
/// counters).
pub(super) fn usage(conn: &Connection, project: &str) -> Result<LedgerUsage> {
    let read: Option<(i64, i64)> = conn
        .prepare_cached(sql!("ledger_usage"))?
        .query_row(params![project], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let (entries, bytes) = read.unwrap_or_default();
    Ok(LedgerUsage {
        entries: u64::try_from(entries).unwrap_or(0),
        bytes: u64::try_from(bytes).unwrap_or(0),
    })
}

/// `Store::ledger_first_expiry`: `ledger_first_expiry.sql` on a reader.
pub(super) fn first_expiry(
    conn: &Connection,
    project: &str,
    now: Timestamp,
) -> Result<Option<Timestamp>> {
    Ok(conn
        .prepare_cached(sql!("ledger_first_expiry"))?
        .query_row(params![project, time::micros(now)], |r| time::get(r, 0))
        .optional()?)
}
