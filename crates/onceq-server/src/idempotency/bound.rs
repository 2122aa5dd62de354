//! The call ledger's bound per project (`--ledger-max-entries`,
//! `--ledger-max-bytes`): what one project's keyed calls may keep at once,
//! so no project's keys grow the store without end, and none takes another
//! project's room (the bound is each project's own).
//!
//! Past either, a keyed call that would make a new entry is refused before
//! it runs: 429 `RATE_LIMITED`, `Retry-After` until the project's first
//! entry ends (its window, `--dedupe-window-secs`). Nothing was done, so
//! the caller may retry then, or at once without `Idempotency-Key`.
//! Replays of entries already kept are answered as ever.
//!
//! Why refuse rather than keep the answer for a shorter window: a shorter
//! window still grows with the call rate (rate × window), so it bounds
//! nothing; and a key's promise (this call is done at most once within the
//! window, docs/api.md) would silently weaken for exactly the calls that
//! rely on it. A refusal keeps the store bounded and tells the client its
//! retries are not protected right now.
//!
//! The check reads the project's counters (`Store::ledger_usage`: one
//! primary-key read, kept by the store in the transaction of every claim,
//! answer, release, takeover and purge), after the claim, so the claim
//! counts itself and a call in flight counts: admitted entries never pass
//! the bound (two claims at its edge may both be refused). The bytes may
//! pass it by the answers of calls in flight (each at most 1 MiB,
//! `record::MAX_RECORDED`). An entry past its window counts until the
//! purger removes it (`--purge-secs`). Only a refusal asks more: when the
//! project's first live entry ends, one index probe.

use jiff::Timestamp;
use onceq_types::ledger::retry_after_secs;

use super::Held;
use crate::{ApiError, AppState};

/// `Ok` when the project of `held` is within its bounds at `now`, else the
/// refusal to answer (the claim is still to be released).
pub(super) async fn check(state: &AppState, held: &Held, now: Timestamp) -> Result<(), ApiError> {
    let limits = state.config.ledger;
    let usage = state
        .store()
        .ledger_usage(&held.key.project)
        .await
        .map_err(|e| ApiError::from_store(e, ""))?;
    let over_count = usage.entries > u64::from(limits.max_entries);
    let over_bytes = usage.bytes >= limits.max_bytes;
    if !over_count && !over_bytes {
        return Ok(());
    }
    let what = match over_count {
        true => format!("{} entries", limits.max_entries),
        false => format!("{} bytes of answers", limits.max_bytes),
    };
    let first_expiry = state
        .store()
        .ledger_first_expiry(&held.key.project, now)
        .await
        .map_err(|e| ApiError::from_store(e, ""))?;
    // None live: what fills the ledger has expired and goes at the
    // purger's next pass.
    let secs = first_expiry.map_or(purge_wait(state), |t| retry_after_secs(t, now).max(1));
    Err(ApiError::rate_limited(
        secs,
        format!(
            "Idempotency-Key: this project's call ledger is full ({what}, the most it keeps at once); nothing was done"
        ),
    )
    .with_hint(
        "retry after Retry-After (when its first key's window ends), or send the call without Idempotency-Key; the operator sets --ledger-max-entries and --ledger-max-bytes",
    ))
}

/// Seconds until the purger's next pass at the latest.
fn purge_wait(state: &AppState) -> u64 {
    state.config.purge_interval.as_secs().max(1)
}
