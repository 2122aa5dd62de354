//! Forgets idempotency keys whose dedupe window has passed (publish's
//! per-message keys and the call ledger's `Idempotency-Key`s), and removes
//! messages older than their queue's retention.

use crate::AppState;

/// Runs until shutdown.
pub async fn run(state: AppState) {
    let interval = state.config.purge_interval;
    super::every("purger", &state.clone(), interval, || pass(&state)).await;
}

/// One pass of the purges.
pub async fn pass(state: &AppState) -> Result<(), onceq_store::StoreError> {
    let now = state.clock.now();
    let keys = state.store.dedupe_purge(now).await?;
    let calls = state.store.ledger_purge(now).await?;
    let messages = state.store.message_retention_purge(now).await?;
    if keys + calls + messages > 0 {
        tracing::debug!(
            keys,
            calls,
            messages,
            "purged expired dedupe keys, call-ledger entries and messages"
        );
    }
    Ok(())
}
