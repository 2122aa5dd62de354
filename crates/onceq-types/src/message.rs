//! Messages, as published and as handed to a consumer.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// Where a message is in its life (see `docs/state-machines.md`).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageStatus {
    /// Ready to be handed out.
    Available,
    /// Waiting for its delay (publish or nack) to pass.
    Delayed,
    /// Handed out under a lease.
    InFlight,
    /// Only in replay answers: the message was acked, purged or expired
    /// since it was first published; its idempotency key still holds.
    Gone,
}

impl MessageStatus {
    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Available => "available",
            Self::Delayed => "delayed",
            Self::InFlight => "in_flight",
            Self::Gone => "gone",
        }
    }

    /// Parses a stored name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "available" => Some(Self::Available),
            "delayed" => Some(Self::Delayed),
            "in_flight" => Some(Self::InFlight),
            "gone" => Some(Self::Gone),
            _ => None,
        }
    }
}

/// A message's headers: names (lower-case, `[a-z0-9_.-]`) to string values,
/// in name order. W3C `traceparent`/`tracestate` travel here.
pub type Headers = BTreeMap<String, String>;

/// The `data` of a publish, and each item of a batch publish.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PublishedMessage {
    /// `qmsg_<random>`; the first id again on a replay.
    pub message_id: String,
    /// The queue it went to.
    pub queue: String,
    /// The payload, in its stored (compact) form.
    #[cfg_attr(feature = "openapi", schema(value_type = Value))]
    pub payload: Box<RawValue>,
    /// `available` or `delayed` for a new message; on a replay, where the
    /// first message is now (`gone` if it was already acked).
    pub status: MessageStatus,
    /// Hand-outs so far: 0 for a new message.
    pub delivery_count: i32,
    /// When the (first) message was stored.
    pub created_at: Timestamp,
    /// The headers as given to this publish (names lower-cased). On a
    /// replay the stored message keeps its first publish's headers.
    #[serde(default)]
    pub headers: Headers,
    /// Only in batch answers: whether this item was a replay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_replay: Option<bool>,
}

/// An item of a `consume` answer.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ConsumedMessage {
    /// The message's id.
    pub message_id: String,
    /// The queue it came from.
    pub queue: String,
    /// The payload as published (compact form).
    #[cfg_attr(feature = "openapi", schema(value_type = Value))]
    pub payload: Box<RawValue>,
    /// Always `in_flight`.
    pub status: MessageStatus,
    /// Hand-outs so far, including this one (1 on the first).
    pub delivery_count: i32,
    /// Names this lease; `ack`, `nack` and `extend` may pass it back so that
    /// a consumer whose lease expired cannot touch a later holder's message.
    pub receipt: String,
    /// When the message was stored.
    pub created_at: Timestamp,
    /// When the lease runs out and the message returns to the queue.
    pub lease_expires_at: Timestamp,
    /// The idempotency key it was published with, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    /// The headers it was published with (`{}` when none).
    #[serde(default)]
    pub headers: Headers,
}

/// Where `GET /v1/queue/message/{queue}/{message_id}` found a message.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageState {
    /// Ready to be handed out (a delayed message whose time has come too).
    Available,
    /// Waiting for its delay (publish or nack) to pass.
    Delayed,
    /// Handed out under a lease.
    InFlight,
    /// In the queue's dead-letter queue.
    DeadLettered,
    /// Acked and kept for its queue's `completed_retention_seconds`.
    Completed,
    /// Cancelled, and kept for its queue's `completed_retention_seconds`.
    Cancelled,
}

/// `GET /v1/queue/message/{queue}/{message_id}`: one message wherever it
/// is, with its history.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MessageDetail {
    /// The message's id.
    pub message_id: String,
    /// The queue asked about (also for a dead letter, which its DLQ holds).
    pub queue: String,
    /// Where it is.
    pub state: MessageState,
    /// The payload as published (compact form); `null` when withheld
    /// (`payload_withheld`).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Value>))]
    pub payload: Option<Box<RawValue>>,
    /// `true` when the key may not read payloads (it lacks the `peek`
    /// action, [`crate::capability::PAYLOAD_ACTION`]): `payload` and
    /// `result` are then `null` whatever the message holds.
    #[serde(default)]
    pub payload_withheld: bool,
    /// The headers it was published with (`{}` when none).
    pub headers: Headers,
    /// As stored (0 where the queue ignores priority).
    pub priority: i32,
    /// Its message group, if any.
    pub message_group_id: Option<String>,
    /// The key it was published with, if any.
    pub idempotency_key: Option<String>,
    /// Hand-outs so far (reset to 0 by a redrive).
    pub delivery_count: i32,
    /// When it was published.
    pub created_at: Timestamp,
    /// When it became (or becomes) available.
    pub visible_at: Timestamp,
    /// The end of its lease while in flight.
    pub lease_expires_at: Option<Timestamp>,
    /// When it was acked or cancelled (`completed`, `cancelled`), else `null`.
    pub completed_at: Option<Timestamp>,
    /// What its ack gave as `result` (`completed` only), else `null`.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Value>))]
    pub result: Option<Box<RawValue>>,
    /// The latest error text a failed hand-out gave (kept by dead letters
    /// and redrives), `null` when none did.
    pub last_error: Option<String>,
    /// Its last ended hand-outs, oldest first (at most
    /// [`MAX_ATTEMPTS_KEPT`](crate::attempt::MAX_ATTEMPTS_KEPT)).
    pub attempts: Vec<crate::Attempt>,
}
