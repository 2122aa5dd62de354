//! `data` bodies of the answers that are not queue or message records.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

/// A list answer: `{items: [...]}`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Items<T> {
    /// The items.
    pub items: Vec<T>,
}

/// `ack`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Acked {
    /// True only when the message was in flight under the given receipt.
    pub acked: bool,
}

/// `ack_batch`, and `consume`'s `acks`: which acks ended their lease and
/// which did not, each entry in one of the two lists (in the order sent),
/// as SQS's DeleteMessageBatch answers.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AckBatchResult {
    /// The acks that ended their lease (as `ack` answering `acked: true`).
    pub successful: Vec<AckSucceeded>,
    /// The acks that did not.
    pub failed: Vec<AckFailed>,
}

/// An ack of a batch that ended its lease.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AckSucceeded {
    /// The message.
    pub message_id: String,
}

/// An ack of a batch that did not end its lease, and why.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AckFailed {
    /// The message.
    pub message_id: String,
    /// Why: [`LEASE_NOT_HELD`] (the only one today).
    pub code: String,
    /// The reason in words.
    pub message: String,
    /// True when the entry itself is at fault (a lease the caller no
    /// longer holds): sending it again changes nothing.
    pub sender_fault: bool,
}

/// [`AckFailed::code`]: the message is not in flight under the receipt
/// given (acked already, its lease expired and was handed out again,
/// cancelled, or an unknown message) — what a single `ack` answers as
/// `acked: false`.
pub const LEASE_NOT_HELD: &str = "LEASE_NOT_HELD";

/// `consume`: the messages handed out, and the outcome of the acks the
/// call carried (only when it carried some).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Consumed {
    /// The messages handed out.
    pub items: Vec<crate::ConsumedMessage>,
    /// The outcome of the request's `acks`, as `ack_batch` answers; absent
    /// when it carried none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acks: Option<AckBatchResult>,
}

/// `nack`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Nacked {
    /// True when the message was in flight (under the receipt, if given).
    pub nacked: bool,
    /// True when it went back to the queue.
    pub requeued: bool,
    /// True when it went to the dead-letter queue.
    pub dead_lettered: bool,
    /// Hand-outs so far.
    pub delivery_count: i32,
}

/// `extend`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Extended {
    /// True when the lease was still held and is now longer.
    pub extended: bool,
    /// The lease's end (unchanged when `extended` is false, `null` if none).
    pub lease_expires_at: Option<Timestamp>,
}

/// `purge`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Purged {
    /// Messages removed.
    pub purged: i64,
}

/// `delete`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deleted {
    /// The queue removed.
    pub queue: String,
    /// Always true: deleting an unknown queue is a 404.
    pub deleted: bool,
    /// Messages removed with it.
    pub messages_deleted: i64,
}

/// `pause` and `resume`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Paused {
    /// The queue.
    pub queue: String,
    /// Whether it is paused now (pausing a paused queue answers true).
    pub paused: bool,
}

/// `dlq/redrive`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Redriven {
    /// The queue messages went back to.
    pub queue: String,
    /// The dead-letter queue they came from.
    pub dead_letter_queue: String,
    /// How many moved.
    pub redriven: i64,
    /// Only with `message_ids`: those the dead-letter queue does not hold
    /// (never dead-lettered, already redriven, deleted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_found: Option<Vec<String>>,
    /// Only with `message_ids`: those a consumer of the dead-letter queue
    /// holds right now; they stay with their holder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_flight: Option<Vec<String>>,
}

/// `POST /v1/queue/cancel`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cancelled {
    /// True when the queue held the message and it is removed.
    pub cancelled: bool,
}
