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

/// Free pages one `space_reclaim` hands back at most (16 MiB of 4 KiB
/// pages): one short write on the embedded store's writer thread, repeated
/// while it finds pages.
const RECLAIM_PAGES: u32 = 4096;

/// Runs until shutdown.
pub async fn run(state: AppState) {
    let interval = state.config.purge_interval;
    super::every("purger", &state.clone(), interval, || pass(&state)).await;
}

/// Calls `purge` with `limit` until it deletes fewer; the total.
async fn in_batches<F, Fut>(limit: u32, mut purge: F) -> Result<u64, onceq_store::StoreError>
where
    F: FnMut(u32) -> Fut,
    Fut: std::future::Future<Output = Result<u64, onceq_store::StoreError>>,
{
    let mut total = 0;
    loop {
        let n = purge(limit).await?;
        total += n;
        if n < u64::from(limit) {
            return Ok(total);
        }
    }
}

/// One pass of the purges.
pub async fn pass(state: &AppState) -> Result<(), onceq_store::StoreError> {
    let now = state.clock.now();
    let keys = state.store().dedupe_purge(now).await?;
    let calls = in_batches(LEDGER_BATCH, |n| state.store().ledger_purge(now, n)).await?;
    let messages = state.messages().purge_expired(now).await?;
    let finished = in_batches(FINISHED_BATCH, |n| state.messages().purge_finished(now, n)).await?;
    if keys + calls + messages + finished > 0 {
        tracing::debug!(
            keys,
            calls,
            messages,
            finished,
            "purged expired dedupe keys, call-ledger entries, old messages and finished messages"
        );
    }
    // What was purged is handed back to the file system (the embedded
    // store's file shrinks; PostgreSQL reuses it by itself).
    let mut reclaimed = 0;
    loop {
        let n = state.store().space_reclaim(RECLAIM_PAGES).await?;
        if n == 0 {
            break;
        }
        reclaimed += n;
    }
    if reclaimed > 0 {
        tracing::debug!(
            bytes = reclaimed,
            "gave purged space back to the file system"
        );
    }
    Ok(())
}
