//! The webhook dispatcher, a background service every server runs: every
//! `--push-scan-ms` (and at once when this server records an event) it
//! refreshes the [`Listeners`](super::Listeners) cache (on the timer only)
//! and claims due deliveries from the outbox, as many as it has free
//! slots, attempting each in a task of its own. Claims hold a delivery for
//! its attempt's timeout plus a margin, so several servers on one database
//! each send different deliveries, and one that dies leaves its deliveries
//! due again when their claims end. While no project has a webhook it
//! makes one query per tick (the refresh) and claims nothing.

use std::sync::Arc;

use onceq_store::WebhookDeliveryClaim;
use tokio::sync::Semaphore;
use tokio_util::task::TaskTracker;

use super::sender::claim_for;
use crate::{AppState, metrics::ErrorSource};

/// Attempts in flight at once per server.
pub const MAX_CONCURRENT_ATTEMPTS: usize = 32;

/// Runs until shutdown.
pub async fn run(state: AppState, tracker: TaskTracker) {
    let Some(sender) = state.events.sender(&state) else {
        return;
    };
    let slots = Arc::new(Semaphore::new(MAX_CONCURRENT_ATTEMPTS));
    let mut timer = tokio::time::interval(state.config.push.scan_interval);
    timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let refresh = tokio::select! {
            _ = state.shutdown.cancelled() => break,
            _ = timer.tick() => true,
            _ = state.events.recorded.notified() => false,
        };
        if refresh {
            match state.store().webhook_scan().await {
                Ok(all) => state.events.listeners.replace(&all),
                Err(e) => failed(&state, "scan", &e),
            }
        }
        // No webhook anywhere: no outbox row either (they go with their
        // webhook), so a server nobody uses webhooks on claims nothing.
        let free = slots.available_permits();
        if free == 0 || state.events.listeners.is_empty() {
            continue;
        }
        let now = state.clock.now();
        let claimed = state
            .store()
            .webhook_delivery_claim(WebhookDeliveryClaim {
                now,
                claim_until: now + claim_for(&state),
                limit: free as u32,
            })
            .await;
        let deliveries = match claimed {
            Ok(d) => d,
            Err(e) => {
                failed(&state, "claim", &e);
                continue;
            }
        };
        for d in deliveries {
            let Ok(slot) = slots.clone().try_acquire_owned() else {
                break;
            };
            let (state, sender) = (state.clone(), sender.clone());
            tracker.spawn(async move {
                let grace = state.config.push.shutdown_grace;
                let shutdown = async {
                    state.shutdown.cancelled().await;
                    tokio::time::sleep(grace).await;
                };
                tokio::select! {
                    _ = sender.attempt(&state, &d) => {}
                    // Unsettled: its claim runs out and it is attempted
                    // again, by this server after a restart or by another.
                    _ = shutdown => tracing::info!(
                        webhook = %d.webhook.webhook_id,
                        event_id = %d.event_id,
                        "webhook attempt abandoned at shutdown; it is attempted again after its claim"
                    ),
                }
                drop(slot);
            });
        }
    }
    tracing::debug!(service = "webhook_dispatcher", "stopped");
}

fn failed(state: &AppState, what: &str, e: &onceq_store::StoreError) {
    let unavailable = matches!(e, onceq_store::StoreError::Unavailable(_));
    state.metrics.db_error(ErrorSource::Push, unavailable);
    if unavailable {
        crate::outage::unavailable("webhook_dispatcher", e);
    } else {
        tracing::warn!(service = "webhook_dispatcher", error = %e, "{what} failed; will retry");
    }
}
