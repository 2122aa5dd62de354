//! One subscription's loop. It holds `max_in_flight` delivery slots (a
//! semaphore); while slots are free it claims up to that many messages (at
//! most 10 per claim) and hands each to a delivery task that keeps its slot
//! until the message is acked or nacked. With nothing to claim it sleeps
//! until a publish on this server wakes the queue, the dispatcher pokes it
//! (its queue has work: published elsewhere, a retry come due), or it is
//! stopped. A slow endpoint only ever fills its own slots.
//!
//! Each slot also needs room under the outbound caps (`crate::outbound`'s
//! [`Limits`](crate::outbound::Limits)) before its message is claimed: the
//! first slot waits for it, the others take it only if it is free now. So
//! a subscription whose project (or destination, or process) is at its cap
//! claims nothing and its messages stay available, not leased.

use std::sync::Arc;

use jiff::SignedDuration;
use onceq_store::{MessageClaim, StoreError, SubscriptionRecord};
use onceq_types::MAX_BATCH;
use reqwest::Url;
use tokio::sync::{Notify, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::delivery::{self, Ctx};
use crate::{
    metrics::ErrorSource,
    outbound::{self, Kind},
};

/// What one subscription's deliveries share.
pub(super) struct Target {
    /// The subscription as stored.
    pub(super) record: SubscriptionRecord,
    /// Its URL, parsed.
    pub(super) url: Url,
    /// The lease of each claim: the request timeout plus the margin.
    pub(super) lease: SignedDuration,
    /// What its deliveries count as (a cron task's queue: `Cron`).
    pub(super) kind: Kind,
    /// Its URL's `host:port`, for the per-destination cap.
    pub(super) destination: String,
}

/// The dispatcher's handle on a running subscriber.
pub(super) struct Handle {
    poke: Arc<Notify>,
    stop: CancellationToken,
}

impl Handle {
    /// Its queue has work: claim (now, or as soon as a slot frees up).
    pub(super) fn poke(&self) {
        // `notify_one` keeps the wake-up if the loop is busy, so it is
        // never lost.
        self.poke.notify_one();
    }

    /// Stops claiming; deliveries in flight finish.
    pub(super) fn stop(&self) {
        self.stop.cancel();
    }
}

/// Starts the loop of `record` on `tracker`.
pub(super) fn spawn(ctx: Arc<Ctx>, record: SubscriptionRecord, tracker: &TaskTracker) -> Handle {
    let handle = Handle {
        poke: Arc::new(Notify::new()),
        stop: ctx.state.shutdown.child_token(),
    };
    let url = match Url::parse(&record.url) {
        Ok(url) => url,
        Err(e) => {
            // Checked on subscribe; only a hand-edited row gets here.
            tracing::error!(subscription = %record.subscription_id, error = %e, "push subscription has an invalid URL; not delivering");
            return handle;
        }
    };
    let margin = SignedDuration::try_from(ctx.state.config.push.lease_margin)
        .unwrap_or(SignedDuration::from_secs(30));
    let kind = match record
        .queue
        .queue
        .starts_with(crate::cron::task::QUEUE_PREFIX)
    {
        true => Kind::Cron,
        false => Kind::Push,
    };
    let target = Arc::new(Target {
        lease: SignedDuration::from_secs(record.timeout_seconds.into()) + margin,
        kind,
        destination: outbound::destination(&url),
        url,
        record,
    });
    tracing::info!(subscription = %target.record.subscription_id, queue = %target.record.queue.queue, "push subscriber started");
    tracker.spawn(run(
        ctx,
        target,
        handle.poke.clone(),
        handle.stop.clone(),
        tracker.clone(),
    ));
    handle
}

async fn run(
    ctx: Arc<Ctx>,
    target: Arc<Target>,
    poke: Arc<Notify>,
    stop: CancellationToken,
    tracker: TaskTracker,
) {
    let record = &target.record;
    let project = record.queue.project.as_str();
    let limits = ctx.state.outbound.limits.clone();
    let (kind, destination) = (target.kind, target.destination.as_str());
    let slots = Arc::new(Semaphore::new(record.max_in_flight.max(1) as usize));
    let wakeups = ctx.state.wakeups.clone();
    let published = wakeups.channel(&record.queue.project, &record.queue.queue);
    loop {
        // `biased`: once stopped, never claim again, even with work waiting.
        let first = tokio::select! {
            biased;
            _ = stop.cancelled() => break,
            permit = slots.clone().acquire_owned() => permit.expect("the semaphore is never closed"),
        };
        let room = tokio::select! {
            biased;
            _ = stop.cancelled() => break,
            room = limits.acquire(kind, project, destination) => room,
        };
        let mut permits = vec![(first, room)];
        while permits.len() < MAX_BATCH {
            let Ok(slot) = slots.clone().try_acquire_owned() else {
                break;
            };
            let Some(room) = limits.try_acquire(kind, project, destination) else {
                break;
            };
            permits.push((slot, room));
        }
        // Registered before the claim, so a publish that lands between an
        // empty claim and the wait still wakes us.
        let woken = published.dispatchers.notified();
        tokio::pin!(woken);
        woken.as_mut().enable();

        let asked = permits.len();
        let claimed = ctx
            .state
            .messages()
            .claim(
                &record.queue.project,
                &record.queue.queue,
                MessageClaim {
                    queue: record.queue.clone(),
                    max: asked as u32,
                    visibility_timeout: Some(target.lease),
                    now: ctx.state.clock.now(),
                },
            )
            .await;
        match claimed {
            Ok(messages) => {
                let got = messages.len();
                for (message, slot) in messages.into_iter().zip(permits) {
                    tracker.spawn(delivery::run(ctx.clone(), target.clone(), message, slot));
                }
                if got == asked {
                    // Every slot found a message: there may be more.
                    continue;
                }
            }
            Err(StoreError::QueueNotFound) => {
                // Deleted with its queue; the dispatcher forgets it on its
                // next scan.
                break;
            }
            Err(e) => {
                ctx.state
                    .metrics
                    .db_error(ErrorSource::Push, matches!(e, StoreError::Unavailable(_)));
                tracing::warn!(subscription = %record.subscription_id, error = %e, "push claim failed; waiting for the next poke");
            }
        }
        tokio::select! {
            biased;
            _ = stop.cancelled() => break,
            _ = &mut woken => {}
            _ = poke.notified() => {}
        }
    }
    tracing::debug!(subscription = %record.subscription_id, "push subscriber stopped");
}
