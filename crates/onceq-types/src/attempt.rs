//! A message's ended hand-outs (queue-api-2.md §5): what
//! `GET /v1/queue/message/{queue}/{message_id}` lists under `attempts`.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

/// The most attempts kept with a message; older ones are dropped.
pub const MAX_ATTEMPTS_KEPT: usize = 20;

/// The longest `error` a nack may give, in bytes (8 KiB).
pub const MAX_NACK_ERROR_BYTES: usize = 8_192;

/// The largest `result` an ack may give: the byte length of its compact
/// JSON (64 KiB).
pub const MAX_ACK_RESULT_BYTES: usize = 65_536;

/// How a hand-out ended.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttemptOutcome {
    /// Acked (kept only while the queue retains completed messages).
    Acked,
    /// Nacked by a consumer, and requeued (or dropped: no DLQ, no requeue).
    Nacked,
    /// Its lease ran out without an ack or extend.
    LeaseExpired,
    /// A push delivery failed (status code, timeout or connection error).
    PushFailed,
    /// The failure that moved it to the dead-letter queue (a nack, an
    /// expired lease or a failed push: `error` says which).
    DeadLettered,
    /// Cancelled while in flight.
    Cancelled,
}

impl AttemptOutcome {
    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Acked => "acked",
            Self::Nacked => "nacked",
            Self::LeaseExpired => "lease_expired",
            Self::PushFailed => "push_failed",
            Self::DeadLettered => "dead_lettered",
            Self::Cancelled => "cancelled",
        }
    }
}

/// One ended hand-out.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    /// The message's `delivery_count` during this hand-out (1 for the first).
    pub delivery_count: i32,
    /// When it was handed out (`null` for a lease granted before onceq
    /// recorded it).
    pub consumed_at: Option<Timestamp>,
    /// When the hand-out ended.
    pub ended_at: Timestamp,
    /// How it ended.
    pub outcome: AttemptOutcome,
    /// Why it failed: the nack's `error`, the lease expiry's or the push
    /// delivery's own text; `null` when none was given.
    pub error: Option<String>,
}
