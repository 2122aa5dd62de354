//! The call ledger (`Store::ledger_*`): claim, complete, release, purge.
//! Every call runs on the writer thread, so a claim and its read see one
//! state.

use jiff::Timestamp;
use rusqlite::{Connection, OptionalExtension, params};

use super::time;
use crate::rules::ledger::{CLAIM_ATTEMPTS, Entry, PURGE_BATCH, contended};
use crate::{LedgerAnswer, LedgerClaim, LedgerClaimOutcome, LedgerComplete, LedgerRelease, Result};

/// `Store::ledger_claim`.
pub(super) fn claim(conn: &Connection, p: &LedgerClaim) -> Result<LedgerClaimOutcome> {
    let k = &p.key;
    for _ in 0..CLAIM_ATTEMPTS {
        let claimed = conn
            .prepare_cached(sql!("ledger_claim"))?
            .query_row(
                params![
                    k.project,
                    k.capability,
                    k.key,
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
        let entry = conn
            .prepare_cached(sql!("ledger_get"))?
            .query_row(params![k.project, k.capability, k.key], |r| {
                let status: Option<i64> = r.get(1)?;
                let body: Option<Vec<u8>> = r.get(2)?;
                Ok(Entry {
                    fingerprint: r.get(0)?,
                    answer: status.zip(body).map(|(status, body)| LedgerAnswer {
                        status: u16::try_from(status).unwrap_or(500),
                        body,
                    }),
                    locked_until: time::get_opt(r, 3)?,
                    expires_at: time::get(r, 4)?,
                })
            })
            .optional()?;
        if let Some(outcome) = entry.and_then(|e| e.judge(&p.fingerprint, p.now)) {
            return Ok(outcome);
        }
    }
    Err(contended())
}

/// `Store::ledger_complete`.
pub(super) fn complete(conn: &Connection, p: &LedgerComplete) -> Result<bool> {
    let k = &p.key;
    let n = conn
        .prepare_cached(sql!("ledger_complete"))?
        .execute(params![
            k.project,
            k.capability,
            k.key,
            p.token,
            i64::from(p.answer.status),
            p.answer.body,
            time::micros(p.now)
        ])?;
    Ok(n > 0)
}

/// `Store::ledger_release`.
pub(super) fn release(conn: &Connection, p: &LedgerRelease) -> Result<bool> {
    let k = &p.key;
    let n = conn
        .prepare_cached(sql!("ledger_release"))?
        .execute(params![k.project, k.capability, k.key, p.token])?;
    Ok(n > 0)
}

/// `Store::ledger_purge`: batches until one comes back short, as on
/// PostgreSQL (`dedupe_purge` deletes its keys in one statement too).
pub(super) fn purge(conn: &Connection, now: Timestamp) -> Result<u64> {
    let mut stmt = conn.prepare_cached(sql!("ledger_purge"))?;
    let mut total = 0;
    loop {
        let n = stmt.execute(params![time::micros(now), PURGE_BATCH])? as u64;
        total += n;
        if n < PURGE_BATCH as u64 {
            return Ok(total);
        }
    }
}
