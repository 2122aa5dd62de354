//! Queues: their record, their settings and their statistics.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

/// The kind of queue.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QueueType {
    /// Any order within a priority; many messages in flight at once.
    #[default]
    Standard,
    /// Strict publish order within a message group, one in flight per group.
    Fifo,
}

impl QueueType {
    /// The name stored and sent on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Standard => "standard",
            Self::Fifo => "fifo",
        }
    }

    /// Parses the stored name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "standard" => Some(Self::Standard),
            "fifo" => Some(Self::Fifo),
            _ => None,
        }
    }
}

/// A queue as `create`, `get` and `list` return it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueRecord {
    /// The queue's name, unique within its project.
    pub name: String,
    /// `standard` or `fifo`.
    #[serde(rename = "type")]
    pub queue_type: QueueType,
    /// Where messages go after their last failed hand-out; `null` for a queue
    /// that has none (a dead-letter queue itself, or one whose DLQ was deleted).
    pub dead_letter_queue: Option<String>,
    /// A message is handed out at most `max_retries + 1` times.
    pub max_retries: i32,
    /// Messages older than this are removed.
    pub message_retention_days: i32,
    /// The lease `consume` grants when the call names none, in seconds.
    pub visibility_timeout_default: i32,
    /// Whether publishes may set `priority`. Consumption always honours it.
    pub enable_priority: bool,
    /// How long an acked (or cancelled) message is kept, as `completed`
    /// (or `cancelled`), in seconds; 0 = gone at once.
    #[serde(default)]
    pub completed_retention_seconds: i32,
    /// When the queue was created.
    pub created_at: Timestamp,
}

/// Settings of a queue; the defaults are those of a queue created by its
/// first publish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueSettings {
    /// `standard` or `fifo`.
    pub queue_type: QueueType,
    /// `None` means the default `<name>-dlq`, created along with the queue.
    pub dead_letter_queue: Option<String>,
    /// Default 3.
    pub max_retries: i32,
    /// Default 7, at most 30.
    pub message_retention_days: i32,
    /// Default 30 s, at most 43 200 s.
    pub visibility_timeout_default: i32,
    /// Default true.
    pub enable_priority: bool,
    /// Default 0 (the server's `--completed-retention-seconds` for a queue
    /// created by `create` or a first publish),
    /// at most [`MAX_COMPLETED_RETENTION_SECONDS`](crate::MAX_COMPLETED_RETENTION_SECONDS).
    pub completed_retention_seconds: i32,
}

impl Default for QueueSettings {
    fn default() -> Self {
        Self {
            queue_type: QueueType::Standard,
            dead_letter_queue: None,
            max_retries: 3,
            message_retention_days: 7,
            visibility_timeout_default: 30,
            enable_priority: true,
            completed_retention_seconds: 0,
        }
    }
}

/// `GET /v1/queue/stats/{queue}`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueStats {
    /// The queue's name.
    pub queue: String,
    /// Every message still held: `available + delayed + in_flight`.
    pub message_count: i64,
    /// Ready to be handed out now.
    pub available: i64,
    /// Waiting for their delay to pass.
    pub delayed: i64,
    /// Handed out and not yet acked, nacked or expired.
    pub in_flight: i64,
    /// Messages now held by this queue's dead-letter queue.
    pub dead_lettered: i64,
    /// The dead-letter queue's name, if any.
    pub dead_letter_queue: Option<String>,
    /// Age of the oldest held message in whole seconds; 0 when empty.
    pub oldest_message_age_seconds: i64,
}
