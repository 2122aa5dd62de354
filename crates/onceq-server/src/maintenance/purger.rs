//! Forgets idempotency keys whose dedupe window has passed (publish's
//! per-message keys and the call ledger's `Idempotency-Key`s), removes
//! messages older than their queue's retention, and finished messages
//! (completed, cancelled) whose `completed_retention_seconds` is up.

use crate::AppState;

/// Finished messages one statement removes at most; a full batch is
/// followed by another at once, so a pass keeps up with any ack rate while
/// no one statement holds many locks.
const FINISHED_BATCH: u32 = 10_000;

/// Call-ledger entries one statement removes at most (the shared ledger's
/// batch), for the same reason.
const LEDGER_BATCH: u32 = onceq_types::ledger::PURGE_BATCH as u32;

/// Runs until shutdown.
pub async fn run(state: AppState) {
    let interval = state.config.purge_interval;
    super::every("purger", &state.clone(), interval, || pass(&state)).await;
}

/// One pass of the purges.
pub async fn pass(state: &AppState) -> Result<(), onceq_store::StoreError> {
    let now = state.clock.now();
    let keys = state.store.dedupe_purge(now).await?;
    let mut calls = 0;
    loop {
        let n = state.store.ledger_purge(now, LEDGER_BATCH).await?;
        calls += n;
        if n < u64::from(LEDGER_BATCH) {
            break;
        }
    }
    let messages = state.store.message_retention_purge(now).await?;
    let mut finished = 0;
    loop {
        let n = state.store.finished_purge(now, FINISHED_BATCH).await?;
        finished += n;
        if n < u64::from(FINISHED_BATCH) {
            break;
        }
    }
    if keys + calls + messages + finished > 0 {
        tracing::debug!(
            keys,
            calls,
            messages,
            finished,
            "purged expired dedupe keys, call-ledger entries, old messages and finished messages"
        );
    }
    Ok(())
}
