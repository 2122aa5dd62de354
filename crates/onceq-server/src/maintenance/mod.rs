//! Background services every server runs. Each is a small named loop that
//! ticks on its own interval and stops when the shutdown token is
//! cancelled. When several servers share a database they all run these;
//! the store's `SKIP LOCKED` claims keep them from doing the same work twice.
//!
//! - [`lease_reaper`]: returns expired leases to their queue, or to the DLQ
//!   after the last allowed hand-out.
//! - [`purger`]: forgets idempotency keys past the dedupe window and removes
//!   messages past their queue's retention.
//! - [`account_sync`]: writes usage, records the heartbeat, re-reads credit
//!   and rate limits.
//! - [`metrics_upkeep`]: folds latency samples into their histograms.
//! - [`cron_firing`]: fires due cron runs, woken at the next tick.

pub mod account_sync;
pub mod cron_firing;
pub mod lease_reaper;
pub mod metrics_upkeep;
pub mod purger;

use tokio_util::task::TaskTracker;

use crate::{AppState, metrics::ErrorSource};

/// Starts every background service on `tracker`.
pub fn spawn_all(state: &AppState, tracker: &TaskTracker) {
    tracker.spawn(lease_reaper::run(state.clone()));
    tracker.spawn(purger::run(state.clone()));
    tracker.spawn(account_sync::run(state.clone()));
    tracker.spawn(metrics_upkeep::run(state.clone()));
    tracker.spawn(cron_firing::run(state.clone()));
}

/// Runs `tick` every `interval` until shutdown. A failing tick is logged
/// and retried on the next one: a database outage must not kill the loop.
pub(crate) async fn every<F, Fut>(
    name: &'static str,
    state: &AppState,
    interval: std::time::Duration,
    mut tick: F,
) where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), onceq_store::StoreError>>,
{
    let mut timer = tokio::time::interval(interval);
    timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = state.shutdown.cancelled() => break,
            _ = timer.tick() => {}
        }
        if let Err(e) = tick().await {
            let unavailable = matches!(e, onceq_store::StoreError::Unavailable(_));
            state
                .metrics
                .db_error(ErrorSource::Maintenance, unavailable);
            if unavailable {
                crate::outage::unavailable(name, &e);
            } else {
                tracing::warn!(service = name, error = %e, "maintenance pass failed; will retry");
            }
        }
    }
    tracing::debug!(service = name, "stopped");
}
