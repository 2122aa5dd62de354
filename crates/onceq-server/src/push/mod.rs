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
//! - [`config`]: [`PushConfig`], the operator's settings.
//! - [`guard`]: the SSRF guard: which URLs and addresses deliveries may
//!   reach.
//! - [`signature`]: the `Onceq-Signature` HMAC.
//! - [`secret`]: the rule of a caller's secret, and generated ones.
//! - `dispatcher`: the named background service: polls the store for every
//!   subscription and whether its queue has work, and keeps one
//!   `subscriber` per subscription.
//! - `subscriber`: one subscription's loop: claims as many messages as it
//!   has free delivery slots (`max_in_flight`, a semaphore), wakes on local
//!   publishes and on the dispatcher's pokes.
//! - `delivery`: one POST, then the ack or the nack with backoff and jitter.
//! - `client`: the HTTP client deliveries share, and one POST's outcome
//!   (shared with account webhooks, `crate::webhooks`, with `backoff`).
//!
//! One slow or dead endpoint never stalls other queues: each subscription
//! has its own loop and slots, each request its own timeout.

pub mod config;
pub mod guard;
pub mod secret;
pub mod signature;

pub(crate) mod client;
pub(crate) mod delivery;
mod dispatcher;
mod subscriber;

pub use config::PushConfig;

use tokio_util::task::TaskTracker;

use crate::AppState;

/// Starts the push dispatcher on `tracker`; it stops on shutdown, and the
/// tracker then waits for the deliveries in flight (see
/// [`PushConfig::shutdown_grace`]).
pub fn spawn(state: &AppState, tracker: &TaskTracker) {
    tracker.spawn(dispatcher::run(state.clone(), tracker.clone()));
}
