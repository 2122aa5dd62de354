//! Push subscriptions: the server POSTs a queue's messages to webhooks
//! (`docs/api.md`, "Push subscriptions").
//!
//! Deliveries are driven from the database, not from memory: a delivery is
//! a claim of a message under a lease (`timeout_seconds` plus a margin),
//! then an ack with the lease's receipt when the endpoint answers 2xx, or a
//! nack with a backoff delay when it does not (so the failure rule is the
//! queue's: dead-lettered after `max_retries + 1` attempts). Hence a
//! delivery survives a restart (its lease runs out and the message is
//! delivered again), runs on whichever server claims the message when
//! several share a database, and never overlaps another delivery of the same
//! message (the lease outlives the request).
//!
//! The HTTP side (client, SSRF guard, signature, secret, backoff) and the
//! caps on deliveries open at once are `crate::outbound`'s, shared with
//! account webhooks; the settings are [`PushConfig`] (re-exported here,
//! where they were first defined).
//!
//! - `dispatcher`: the named background service: polls the store for every
//!   subscription and whether its queue has work, and keeps one
//!   `subscriber` per subscription.
//! - `subscriber`: one subscription's loop: claims as many messages as it
//!   has free delivery slots (`max_in_flight`, a semaphore), wakes on local
//!   publishes and on the dispatcher's pokes.
//! - `delivery`: one POST, then the ack or the nack with backoff and jitter.
//!
//! One slow or dead endpoint never stalls other queues: each subscription
//! has its own loop and slots, each request its own timeout, and a
//! delivery holds a permit of the outbound caps (its project's, its
//! destination's, the process's) while open, so a tenant's hanging
//! receivers fill that tenant's share only.

mod delivery;
mod dispatcher;
mod subscriber;

pub use crate::outbound::PushConfig;

use tokio_util::task::TaskTracker;

use crate::AppState;

/// Starts the push dispatcher on `tracker`; it stops on shutdown, and the
/// tracker then waits for the deliveries in flight (see
/// [`PushConfig::shutdown_grace`]).
pub fn spawn(state: &AppState, tracker: &TaskTracker) {
    tracker.spawn(dispatcher::run(state.clone(), tracker.clone()));
}
