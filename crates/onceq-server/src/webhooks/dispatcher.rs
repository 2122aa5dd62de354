//! The webhook dispatcher, a background service every server runs: every
//! `--push-scan-ms` (and at once when this server records an event) it
//! refreshes the [`Listeners`](super::Listeners) cache (on the timer only)
//! and claims due deliveries from the outbox, as many as it has free
//! slots, attempting each in a task of its own. Claims hold a delivery for
//! its attempt's timeout plus a margin, so several servers on one database
//! each send different deliveries, and one that dies leaves its deliveries
//! due again when their claims end. While no project has a webhook it
//! makes one query per tick (the refresh) and claims nothing.
//!
//! Fairness: the server has `webhook_max_in_flight` attempt slots, one
//! project holds at most `webhook_max_per_project` of them (and no more
//! than its room under the outbound per-project cap, shared with its push
//! deliveries), and a claim gives projects turns, so a project whose
//! endpoints hang fills its own share while another project's event goes
//! out in the rest at once. An attempt that ends wakes the loop, so a freed
//! slot is used without waiting for the timer.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use onceq_store::WebhookDeliveryClaim;
use tokio::sync::{Notify, Semaphore};
use tokio_util::task::TaskTracker;

use super::sender::claim_for;
use crate::{
    AppState,
    metrics::ErrorSource,
    outbound::{self, Cap, Kind},
};

/// Attempts in flight on this server, per project.
#[derive(Default)]
struct Busy(Mutex<HashMap<String, usize>>);

impl Busy {
    fn add(&self, project: &str, n: isize) {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let count = map.entry(project.to_owned()).or_default();
        *count = count.saturating_add_signed(n);
        if *count == 0 {
            map.remove(project);
        }
    }

    fn snapshot(&self) -> Vec<(String, usize)> {
        let map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.iter().map(|(p, n)| (p.clone(), *n)).collect()
    }
}

/// Runs until shutdown.
pub async fn run(state: AppState, tracker: TaskTracker) {
    let Some(sender) = state.events.sender(&state) else {
        return;
    };
    let caps = *state.outbound.limits.config();
    let slots = Arc::new(Semaphore::new(caps.webhook_max_in_flight));
    let busy = Arc::new(Busy::default());
    let ended = Arc::new(Notify::new());
    let mut timer = tokio::time::interval(state.config.push.scan_interval);
    timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let refresh = tokio::select! {
            _ = state.shutdown.cancelled() => break,
            _ = timer.tick() => true,
            _ = state.events.recorded.notified() => false,
            _ = ended.notified() => false,
        };
        if refresh && let Err(e) = state.events.listeners.refresh(state.store().as_ref()).await {
            failed(&state, "scan", &e);
        }
        // No webhook anywhere: no outbox row either (they go with their
        // webhook), so a server nobody uses webhooks on claims nothing.
        let limits = &state.outbound.limits;
        let free = slots.available_permits().min(limits.process_free());
        if free == 0 || state.events.listeners.is_empty() {
            continue;
        }
        // Each busy project's room: its webhook share less its attempts in
        // flight here, within what its push deliveries leave of its
        // outbound share. Every other project may take `per_project`.
        let per_project = caps.webhook_max_per_project.min(caps.max_per_project);
        let mut attempts: HashMap<String, usize> = busy.snapshot().into_iter().collect();
        for (project, _) in limits.busy_projects() {
            attempts.entry(project).or_default();
        }
        let project_room: Vec<(String, u32)> = attempts
            .into_iter()
            .map(|(project, n)| {
                let outbound_room = caps.max_per_project - limits.project_busy(&project);
                let room = caps
                    .webhook_max_per_project
                    .saturating_sub(n)
                    .min(outbound_room);
                if room == 0 {
                    limits.deferred(Cap::WebhookProject);
                }
                (project, room as u32)
            })
            .filter(|(_, room)| (*room as usize) < per_project)
            .collect();
        let now = state.clock.now();
        let claimed = state
            .store()
            .webhook_delivery_claim(WebhookDeliveryClaim {
                now,
                claim_until: now + claim_for(&state),
                limit: free as u32,
                per_project: per_project as u32,
                project_room,
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
            let (busy, ended) = (busy.clone(), ended.clone());
            let project = d.webhook.project.clone();
            busy.add(&project, 1);
            tracker.spawn(async move {
                let destination = reqwest::Url::parse(&d.webhook.url)
                    .map(|u| outbound::destination(&u))
                    .unwrap_or_default();
                // Room was checked before the claim; this waits only when
                // push deliveries took it since (or for a busy destination).
                let limits = state.outbound.limits.clone();
                let grace = state.config.push.shutdown_grace;
                let shutdown = async {
                    state.shutdown.cancelled().await;
                    tokio::time::sleep(grace).await;
                };
                tokio::select! {
                    _ = async {
                        let _room = limits.acquire(Kind::Webhook, &project, &destination).await;
                        sender.attempt(&state, &d).await
                    } => {}
                    // Unsettled: its claim runs out and it is attempted
                    // again, by this server after a restart or by another.
                    _ = shutdown => tracing::info!(
                        webhook = %d.webhook.webhook_id,
                        event_id = %d.event_id,
                        "webhook attempt abandoned at shutdown; it is attempted again after its claim"
                    ),
                }
                drop(slot);
                busy.add(&project, -1);
                ended.notify_one();
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
