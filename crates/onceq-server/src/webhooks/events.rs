//! [`Events`]: how the rest of the server records an event, in one line:
//! `state.emit(project, Event::QueuePaused { queue }).await`.
//!
//! An event is recorded only when a webhook of its project listens to its
//! type (the [`Listeners`] cache: otherwise nothing is done, no statement),
//! as one outbox row per listening webhook (`Store::webhook_event_insert`),
//! after the change it reports has committed and before the call that made
//! it answers. A server that dies in between loses that one event: the
//! window is the time of one insert. Delivery is the dispatcher's
//! (`super::dispatcher`), woken here.

use std::sync::{Arc, Mutex, OnceLock};

use onceq_store::{WebhookDelivery, WebhookEventInsert};
use onceq_types::webhook::WebhookEvent;
use tokio::sync::Notify;

use super::{Listeners, event::Event, sender::Sender};
use crate::{AppState, metrics::ErrorSource};

/// Per server: the listeners cache, the dispatcher's wake-up, the sender.
#[derive(Debug, Default)]
pub struct Events {
    /// Who listens to what.
    pub listeners: Listeners,
    /// Woken when this server records an event.
    pub(super) recorded: Notify,
    /// The HTTP client and SSRF guard, made on first use.
    sender: OnceLock<Arc<Sender>>,
    /// The credit limit each project's last `credit.exhausted` reported:
    /// one event per exhaustion, not one per refused call.
    exhausted: Mutex<std::collections::HashMap<String, u64>>,
}

impl Events {
    /// The sender, made on first use.
    pub(super) fn sender(&self, state: &AppState) -> Option<Arc<Sender>> {
        if let Some(s) = self.sender.get() {
            return Some(s.clone());
        }
        let made = Sender::new(state)?;
        Some(self.sender.get_or_init(|| Arc::new(made)).clone())
    }

    /// True the first time `project` is refused for want of credit under
    /// this `limit` (a raised limit used up again is a new exhaustion).
    pub(super) fn first_exhaustion(&self, project: &str, limit: u64) -> bool {
        let mut seen = self.exhausted.lock().unwrap_or_else(|e| e.into_inner());
        seen.insert(project.to_owned(), limit) != Some(limit)
    }
}

impl AppState {
    /// Records `event` of `project` for its webhooks (see the module doc).
    /// Never fails the caller: a store error is logged and counted.
    pub async fn emit(&self, project: &str, event: Event) {
        if !self.events.listeners.wants(project, event.kind()) {
            return;
        }
        let _ = self.record(project, event, None).await;
    }

    /// Records `event` (to `only` webhook when given, whatever it listens
    /// to, and then claimed by the caller) and returns the deliveries made.
    pub(super) async fn record(
        &self,
        project: &str,
        event: Event,
        only: Option<(&str, jiff::Timestamp)>,
    ) -> onceq_store::Result<Vec<WebhookDelivery>> {
        let now = self.clock.now();
        let body = WebhookEvent {
            id: onceq_store::ids::event_id(),
            kind: event.kind().to_owned(),
            created_at: now,
            project: project.to_owned(),
            data: event.data(),
        };
        let recorded = self
            .store()
            .webhook_event_insert(WebhookEventInsert {
                project: project.to_owned(),
                event_id: body.id.clone(),
                event_type: body.kind.clone(),
                body: serde_json::to_string(&body).expect("an event serialises"),
                only_webhook: only.map(|(id, _)| id.to_owned()),
                claim_until: only.map(|(_, until)| until),
                now,
            })
            .await;
        match &recorded {
            Ok(made) if !made.is_empty() && only.is_none() => self.events.recorded.notify_one(),
            Ok(_) => {}
            Err(e) => {
                let unavailable = matches!(e, onceq_store::StoreError::Unavailable(_));
                self.metrics.db_error(ErrorSource::Push, unavailable);
                tracing::warn!(%project, event = body.kind, error = %e, "webhook event not recorded; it is lost");
            }
        }
        recorded
    }
}
