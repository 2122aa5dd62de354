//! Account webhooks (queue-api-2.md §8, `docs/api.md`, "Account webhooks"):
//! a project's endpoints receive its events, delivered as push deliveries
//! are (signed, retried with backoff, SSRF-guarded), at least once, each
//! with an event id to dedupe by.
//!
//! - [`event`]: [`Event`], what happened: its type and its `data`.
//! - [`listeners`]: [`Listeners`], which types each project listens to,
//!   cached per server (an event nobody listens to costs no statement).
//! - [`events`]: [`Events`] and `AppState::emit`, the one line that records
//!   an event in the outbox (`Store::webhook_event_insert`).
//! - `dispatcher`: the background service that claims due deliveries and
//!   attempts them, on every server.
//! - `sender`: one attempt (through `crate::push`'s client, guard,
//!   signature and backoff) and its settlement.
//! - `test`: `POST /v1/account/webhooks/test/{id}`'s event, attempted at once.

pub mod event;
pub mod events;
pub mod listeners;

mod dispatcher;
mod sender;
mod test;

pub use event::Event;
pub use events::Events;
pub use listeners::Listeners;
pub use test::send_test;

use tokio_util::task::TaskTracker;

use crate::AppState;

/// Starts the webhook dispatcher on `tracker`; it stops on shutdown, and
/// attempts in flight get push's shutdown grace to finish (an abandoned one
/// is attempted again once its claim runs out).
pub fn spawn(state: &AppState, tracker: &TaskTracker) {
    tracker.spawn(dispatcher::run(state.clone(), tracker.clone()));
}

/// Called when a call of `project` is refused for want of credit: one
/// `credit.exhausted` per exhaustion (see `Events`), recorded in the
/// background so the refusal is not slowed.
pub fn credit_refused(state: &AppState, project: &str) {
    if !state.events.listeners.wants(project, "credit.exhausted") {
        return;
    }
    let Some(standing) = state.accounts.ledger.standing(project) else {
        return;
    };
    if !state.events.first_exhaustion(project, standing.limit) {
        return;
    }
    let (state, project) = (state.clone(), project.to_owned());
    tokio::spawn(async move {
        let event = Event::CreditExhausted {
            limit_usd: onceq_types::account::micros_to_usd(standing.limit),
            spent_usd: onceq_types::account::micros_to_usd(standing.spent),
        };
        state.emit(&project, event).await;
    });
}
