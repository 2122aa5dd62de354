//! Account webhooks: their records, the event outbox (one pending delivery
//! per event and listening webhook) and the attempts kept for `deliveries`.

use jiff::Timestamp;

/// `webhook_insert`: a webhook of a project.
#[derive(Debug, Clone)]
pub struct WebhookInsert {
    /// The owning project.
    pub project: String,
    /// Where events are POSTed (already checked by the caller).
    pub url: String,
    /// Event types it receives, `*` for all (already checked).
    pub events: Vec<String>,
    /// The HMAC key deliveries are signed with (kept as given: signing
    /// needs the key itself).
    pub secret: String,
    /// Free text, `""` when none.
    pub description: String,
    /// Headers added to each delivery, as canonical JSON; `None` for none.
    pub headers: Option<String>,
    /// At most this many webhooks per project (`Invalid` beyond).
    pub max_per_project: usize,
    /// The time of the call.
    pub now: Timestamp,
}

/// A webhook as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookRecord {
    /// `whk_` and 32 hex digits.
    pub webhook_id: String,
    /// The owning project.
    pub project: String,
    /// Where events are POSTed.
    pub url: String,
    /// Event types it receives (`*`: all).
    pub events: Vec<String>,
    /// The signing key.
    pub secret: String,
    /// Free text.
    pub description: String,
    /// Headers added to each delivery (canonical JSON), if any.
    pub headers: Option<String>,
    /// When it was registered.
    pub created_at: Timestamp,
}

impl WebhookRecord {
    /// Whether it receives events of type `kind`.
    pub fn listens_to(&self, kind: &str) -> bool {
        self.events.iter().any(|e| e == kind || e == "*")
    }
}

/// Names one webhook of a project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookRef {
    /// The owning project.
    pub project: String,
    /// Which webhook.
    pub webhook_id: String,
}

/// `webhook_event_insert`: records an event in the outbox, one pending
/// delivery for each webhook of the project that listens to its type (or
/// only for `only_webhook`, whatever it listens to: `test`).
#[derive(Debug, Clone)]
pub struct WebhookEventInsert {
    /// The project it happened in.
    pub project: String,
    /// `evt_…`: recording one event id twice records it once.
    pub event_id: String,
    /// Its type.
    pub event_type: String,
    /// The delivery body, as sent on every attempt.
    pub body: String,
    /// Deliver to this webhook of the project only.
    pub only_webhook: Option<String>,
    /// Claimed by the caller until then (it attempts the delivery itself:
    /// `test`); `None` leaves it due at once for the dispatcher.
    pub claim_until: Option<Timestamp>,
    /// When it happened (and is first due).
    pub now: Timestamp,
}

/// `webhook_delivery_claim`: the dispatcher takes due deliveries.
#[derive(Debug, Clone)]
pub struct WebhookDeliveryClaim {
    /// Deliveries due at or before this are taken.
    pub now: Timestamp,
    /// Held until then: no one else takes them before (if the holder dies,
    /// they come due again then).
    pub claim_until: Timestamp,
    /// At most this many.
    pub limit: u32,
    /// At most this many of one project's deliveries (`u32::MAX`: no
    /// bound). Projects take turns: each project's oldest due delivery
    /// first, then each one's second, and so on, so one project's backlog
    /// never keeps another's event waiting behind it.
    pub per_project: u32,
    /// Projects allowed fewer than `per_project` this time (they have
    /// attempts in flight already), each with how many it may take (0:
    /// none).
    pub project_room: Vec<(String, u32)>,
}

impl WebhookDeliveryClaim {
    /// `project_room` as a JSON object, as both stores' claim reads it.
    pub fn project_room_json(&self) -> String {
        let map: serde_json::Map<String, serde_json::Value> = self
            .project_room
            .iter()
            .map(|(p, n)| (p.clone(), serde_json::Value::from(*n)))
            .collect();
        serde_json::Value::Object(map).to_string()
    }
}

/// A pending delivery handed out for an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookDelivery {
    /// The outbox row.
    pub delivery_id: i64,
    /// Whom to deliver to.
    pub webhook: WebhookRecord,
    /// The event's id.
    pub event_id: String,
    /// Its type.
    pub event_type: String,
    /// The body to POST.
    pub body: String,
    /// When the event happened.
    pub event_at: Timestamp,
    /// This attempt's number (1 on the first).
    pub attempt: i32,
}

/// `webhook_delivery_settle`: the attempt's outcome.
#[derive(Debug, Clone)]
pub struct WebhookDeliverySettle {
    /// The outbox row.
    pub delivery_id: i64,
    /// Its webhook.
    pub webhook_id: String,
    /// Recorded for `deliveries` (the oldest beyond
    /// `onceq_types::webhook::MAX_ATTEMPTS_KEPT` are dropped).
    pub attempt: WebhookAttemptRecord,
    /// Due again then; `None` removes it from the outbox (delivered, or
    /// given up).
    pub retry_at: Option<Timestamp>,
}

/// One attempt, as kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookAttemptRecord {
    /// When it was made.
    pub attempted_at: Timestamp,
    /// The event's type.
    pub event_type: String,
    /// The event's id.
    pub event_id: String,
    /// Its number for the event.
    pub attempt: i32,
    /// `delivered`, `retrying` or `gave_up`.
    pub outcome: String,
    /// The endpoint's HTTP status, if it answered.
    pub status: Option<i32>,
    /// Milliseconds it took.
    pub latency_ms: i64,
    /// Why it failed.
    pub error: Option<String>,
}
