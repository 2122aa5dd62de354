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

/// A queue's retry backoff (queue-api-2.md §6): how long a message waits,
/// `delayed`, before it is handed out again after a failed hand-out (a nack
/// without `delay_seconds`, an expired lease, a failed push delivery).
///
/// After the hand-out numbered `delivery_count` (1 for the first), the
/// delay is `base = min(max_seconds, initial_seconds * multiplier ^
/// (delivery_count - 1))`, then with jitter `base * (1 - jitter * r)` for
/// `r` drawn uniformly from [0, 1): `jitter` 0 is none, 1 is "full jitter"
/// (anywhere in [0, base)). Rounded to the millisecond. The one rule is
/// `onceq-store`'s `rules::backoff`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RetryBackoff {
    /// The delay after the first failed hand-out, in seconds
    /// (1..=[`MAX_BACKOFF_SECONDS`]).
    pub initial_seconds: i32,
    /// Each further failed hand-out multiplies the delay by this
    /// (1..=[`MAX_BACKOFF_MULTIPLIER`]; 1 keeps it constant).
    pub multiplier: f64,
    /// The delay never exceeds this, in seconds
    /// (`initial_seconds`..=[`MAX_BACKOFF_SECONDS`]).
    pub max_seconds: i32,
    /// The fraction of the delay drawn at random (0..=1): 0 none, 1 full.
    pub jitter: f64,
}

/// The longest retry backoff delay: 7 days, as `delay_seconds`' bound.
pub const MAX_BACKOFF_SECONDS: i64 = 604_800;
/// The largest backoff multiplier.
pub const MAX_BACKOFF_MULTIPLIER: f64 = 10.0;

/// A queue as `create`, `get` and `list` return it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// True while the queue is paused (`POST /v1/queue/pause/{queue}`):
    /// publishes are stored, nothing is handed out.
    #[serde(default)]
    pub paused: bool,
    /// The retry backoff of failed hand-outs; `null`: again at once.
    #[serde(default)]
    pub retry_backoff: Option<RetryBackoff>,
    /// The most messages of the queue in flight at once, across every
    /// consumer and server; `null`: no cap.
    #[serde(default)]
    pub max_in_flight: Option<i32>,
    /// The most hand-outs per second (a token bucket shared by every
    /// server on the database); `null`: no cap.
    #[serde(default)]
    pub rate_per_sec: Option<f64>,
    /// How long an acked (or cancelled) message is kept, as `completed`
    /// (or `cancelled`), in seconds; 0 = gone at once.
    #[serde(default)]
    pub completed_retention_seconds: i32,
    /// When the queue was created.
    pub created_at: Timestamp,
}

/// Settings of a queue; the defaults are those of a queue created by its
/// first publish.
#[derive(Debug, Clone, PartialEq)]
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
    /// Default none: a failed hand-out is available again at once.
    pub retry_backoff: Option<RetryBackoff>,
    /// Default none (1..=[`MAX_IN_FLIGHT_CAP`]).
    pub max_in_flight: Option<i32>,
    /// Default none ([`MIN_RATE_PER_SEC`]..=[`MAX_RATE_PER_SEC`]).
    pub rate_per_sec: Option<f64>,
    /// Default 0 (the server's `--completed-retention-seconds` for a queue
    /// created by `create` or a first publish),
    /// at most [`MAX_COMPLETED_RETENTION_SECONDS`](crate::MAX_COMPLETED_RETENTION_SECONDS).
    pub completed_retention_seconds: i32,
}

/// The largest `max_in_flight`.
pub const MAX_IN_FLIGHT_CAP: i64 = 100_000;
/// The smallest `rate_per_sec`: one hand-out every 100 s.
pub const MIN_RATE_PER_SEC: f64 = 0.01;
/// The largest `rate_per_sec`.
pub const MAX_RATE_PER_SEC: f64 = 100_000.0;

impl Default for QueueSettings {
    fn default() -> Self {
        Self {
            queue_type: QueueType::Standard,
            dead_letter_queue: None,
            max_retries: 3,
            message_retention_days: 7,
            visibility_timeout_default: 30,
            enable_priority: true,
            retry_backoff: None,
            max_in_flight: None,
            rate_per_sec: None,
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
    /// True while the queue is paused: nothing is handed out.
    #[serde(default)]
    pub paused: bool,
}
