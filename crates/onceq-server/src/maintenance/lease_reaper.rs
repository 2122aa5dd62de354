//! Returns expired leases to their queue without anyone calling anything.
//! An expiry counts as a failed hand-out: after `max_retries + 1` hand-outs
//! the message goes to the dead-letter queue instead. Through
//! [`crate::messages`], so a message returned to its queue wakes a consumer
//! long-polling it, as a publish does.

use crate::AppState;

/// Runs until shutdown.
pub async fn run(state: AppState) {
    let interval = state.config.lease_reap_interval;
    super::every("lease_reaper", &state.clone(), interval, || pass(&state)).await;
}

/// One pass: keeps going while full batches come back, so a burst of
/// expiries drains within one tick.
pub async fn pass(state: &AppState) -> Result<(), onceq_store::StoreError> {
    let batch = state.config.lease_reap_batch;
    loop {
        let done = state.messages().expire_leases(batch).await?;
        if done.dead_lettered > 0 {
            tracing::info!(count = done.dead_lettered, "expired leases dead-lettered");
        }
        if done.requeued > 0 {
            tracing::debug!(count = done.requeued, "expired leases requeued");
        }
        if done.requeued + done.dead_lettered < u64::from(batch) {
            return Ok(());
        }
    }
}
