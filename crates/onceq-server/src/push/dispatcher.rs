//! The push dispatcher, a background service every server runs: every
//! `scan_interval` it reads every subscription of every project from the
//! store with whether its queue has a message due, keeps one subscriber
//! loop per subscription (started when one appears, stopped when it is
//! deleted) and pokes those with work. One query per tick however many
//! subscriptions there are; when several servers share a database, each
//! runs its own subscribers and the claims split the messages between them.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use onceq_store::SubscriptionDue;
use tokio_util::task::TaskTracker;

use super::{delivery::Ctx, subscriber};
use crate::{AppState, metrics::ErrorSource};

/// Runs until shutdown.
pub async fn run(state: AppState, tracker: TaskTracker) {
    let client = match &state.outbound.client {
        Ok(c) => c.clone(),
        Err(e) => {
            tracing::error!(error = %e, "push deliveries disabled: cannot build the HTTP client");
            return;
        }
    };
    let ctx = Arc::new(Ctx {
        state: state.clone(),
        client,
    });
    let mut running: HashMap<String, subscriber::Handle> = HashMap::new();
    let mut timer = tokio::time::interval(state.config.push.scan_interval);
    timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = state.shutdown.cancelled() => break,
            _ = timer.tick() => {}
        }
        match state.store().subscription_scan(state.clock.now()).await {
            Ok(rows) => sync(&ctx, &tracker, &mut running, rows),
            // An outage must not kill the loop; subscribers keep what they
            // have and get no pokes until the store answers again.
            Err(e) => {
                let unavailable = matches!(e, onceq_store::StoreError::Unavailable(_));
                state.metrics.db_error(ErrorSource::Push, unavailable);
                if unavailable {
                    crate::outage::unavailable("push_dispatcher", &e);
                } else {
                    tracing::warn!(service = "push_dispatcher", error = %e, "scan failed; will retry")
                }
            }
        }
    }
    // Subscribers watch the shutdown token too; this is for clarity.
    for handle in running.values() {
        handle.stop();
    }
    tracing::debug!(service = "push_dispatcher", "stopped");
}

/// Starts subscribers for new subscriptions, stops those of deleted ones,
/// and pokes the ones whose queue has work.
fn sync(
    ctx: &Arc<Ctx>,
    tracker: &TaskTracker,
    running: &mut HashMap<String, subscriber::Handle>,
    rows: Vec<SubscriptionDue>,
) {
    let listed: HashSet<String> = rows
        .iter()
        .map(|r| r.subscription.subscription_id.clone())
        .collect();
    running.retain(|id, handle| {
        let keep = listed.contains(id);
        if !keep {
            tracing::info!(subscription = %id, "push subscription deleted; its subscriber stops");
            handle.stop();
        }
        keep
    });
    for row in rows {
        let id = row.subscription.subscription_id.clone();
        let handle = running
            .entry(id)
            .or_insert_with(|| subscriber::spawn(ctx.clone(), row.subscription, tracker));
        if row.due {
            handle.poke();
        }
    }
}
