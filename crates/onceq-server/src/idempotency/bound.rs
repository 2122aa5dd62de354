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
//! The check reads at most `max_entries + 1` entries of the project (a
//! primary-key range), after the claim, so a call in flight counts. It
//! may overshoot by the calls claimed at once, and the bytes by their
//! answers (each at most 1 MiB, `record::MAX_RECORDED`).

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
        .ledger_usage(&held.key.project, now, limits.max_entries.saturating_add(1))
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
    let secs = usage
        .first_expiry
        .map_or(1, |t| retry_after_secs(t, now).max(1));
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
