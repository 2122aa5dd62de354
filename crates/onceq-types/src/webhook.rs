//! Account webhooks (queue-api-2.md §8, `docs/api.md`, "Account webhooks"):
//! endpoints of a project that receive its events. The bodies of the calls
//! that manage them, the records they answer, the event names, and what one
//! delivery carries.
//!
//! A delivery is signed as a push delivery is (the same `Onceq-Timestamp`
//! and `Onceq-Signature` headers, the same HMAC; `onceq::push::verify_request`
//! checks both), and carries the event's id in [`HEADER_EVENT_ID`] so a
//! receiver can drop the repeats that at-least-once delivery allows.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::request::request;

/// Header carrying the event's id (the same on every attempt).
pub const HEADER_EVENT_ID: &str = "onceq-event-id";
/// Header carrying the event's type (`queue.created`, …).
pub const HEADER_EVENT_TYPE: &str = "onceq-event-type";
/// Header carrying the webhook's id.
pub const HEADER_WEBHOOK_ID: &str = "onceq-webhook-id";
/// Header carrying this attempt's number (1 on the first).
pub const HEADER_ATTEMPT: &str = "onceq-attempt";

/// The most webhooks one project may have.
pub const MAX_WEBHOOKS_PER_PROJECT: usize = 20;
/// The longest description, in bytes.
pub const MAX_DESCRIPTION_BYTES: usize = 500;
/// The most headers a webhook may add to its deliveries.
pub const MAX_WEBHOOK_HEADERS: usize = 16;
/// The most attempts `deliveries/{id}` keeps per webhook (older ones are
/// dropped as new ones are recorded).
pub const MAX_ATTEMPTS_KEPT: usize = 100;
/// An event is attempted at most this many times per webhook, then given
/// up (and its last attempt listed as `gave_up`).
pub const MAX_ATTEMPTS: i32 = 12;
/// An event still undelivered this long after it happened is given up at
/// its next failure, whatever its attempts (24 h).
pub const MAX_EVENT_AGE_SECONDS: i64 = 24 * 3600;
/// How long one attempt may take before it counts as failed, in seconds.
pub const ATTEMPT_TIMEOUT_SECONDS: i64 = 30;

/// Every event a webhook may listen to, in documentation order (`*` is
/// every one of them).
pub const EVENT_TYPES: &[&str] = &[
    "message.dead_lettered",
    "message.failed",
    "queue.created",
    "queue.deleted",
    "queue.paused",
    "queue.resumed",
    "cron.run_failed",
    "credit.exhausted",
    "webhook.test",
];

/// Listens to every event.
pub const ALL_EVENTS: &str = "*";

request! {
    /// `POST /v1/account/webhooks/register`.
    pub struct RegisterWebhook {
        /// Where events are POSTed: an `https://` URL (`http://` and
        /// loopback only where the operator allows them, as for push).
        #[cfg_attr(
            feature = "openapi",
            schema(required = true, nullable = false, min_length = 1, max_length = 2048)
        )]
        pub url: Option<String>,
        /// Event types to receive (see [`EVENT_TYPES`]), or `["*"]` for all.
        #[cfg_attr(feature = "openapi", schema(required = true, nullable = false, min_items = 1))]
        pub events: Option<Vec<String>>,
        /// The HMAC key deliveries are signed with, 16..=255 bytes of
        /// printable ASCII; generated (and answered once) when absent.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(pattern = "^[!-~]{16,255}$"))]
        pub secret: Option<String>,
        /// Free text, at most 500 bytes.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(max_length = 500))]
        pub description: Option<String>,
        /// Headers added to every delivery (at most 16; the rules of
        /// message headers; `onceq-*` names are the server's own).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(schema_with = crate::openapi::headers))]
        pub headers: Option<Box<RawValue>>,
    }
}

/// A webhook as the API shows it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Webhook {
    /// `whk_` and 32 hex digits.
    pub id: String,
    /// Where events are POSTed.
    pub url: String,
    /// The event types it receives (`*`: all).
    pub events: Vec<String>,
    /// Its description (empty when none).
    pub description: String,
    /// Headers added to every delivery.
    pub headers: crate::Headers,
    /// When it was registered.
    pub created_at: Timestamp,
    /// The signing secret: only in the answer of `register` (the caller's
    /// own, or the one generated for it); never shown again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

/// The answer of `delete`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebhookDeleted {
    /// The webhook's id.
    pub id: String,
    /// Always true: an unknown webhook is a 404.
    pub deleted: bool,
}

/// One delivery attempt, as `deliveries/{id}` and `test/{id}` show it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebhookAttempt {
    /// When the attempt was made.
    pub attempted_at: Timestamp,
    /// The event's type.
    pub event: String,
    /// The event's id (the same on every attempt of one event).
    pub event_id: String,
    /// This attempt's number for the event (1 on the first).
    pub attempt: i32,
    /// `delivered` (a 2xx answer), `retrying` (failed; tried again later)
    /// or `gave_up` (failed for the last time: see `MAX_ATTEMPTS`).
    pub outcome: String,
    /// The endpoint's HTTP status; absent when it gave none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<i32>,
    /// How long the attempt took, in milliseconds.
    pub latency_ms: i64,
    /// Why it failed; absent when delivered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The JSON body of one delivery. Signed as sent, byte for byte: verify the
/// raw body, not a re-serialisation of this.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WebhookEvent {
    /// `evt_` and 32 hex digits: the same on every attempt, to dedupe by.
    pub id: String,
    /// The event's type.
    #[serde(rename = "type")]
    pub kind: String,
    /// When it happened.
    pub created_at: Timestamp,
    /// The project it happened in.
    pub project: String,
    /// What happened; its fields depend on the type (`docs/api.md`).
    pub data: serde_json::Value,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_body_names_its_type_type() {
        let e = WebhookEvent {
            id: "evt_1".into(),
            kind: "queue.created".into(),
            created_at: Timestamp::UNIX_EPOCH,
            project: "p".into(),
            data: serde_json::json!({"queue": "q"}),
        };
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["type"], "queue.created");
        assert!(!EVENT_TYPES.contains(&ALL_EVENTS));
    }
}
