//! Queues.

use super::QueueRef;
use jiff::Timestamp;
use onceq_types::queue::QueueSettings;
use onceq_types::{QueueRecord, QueueType};

/// `queue_create`.
#[derive(Debug, Clone)]
pub struct QueueCreate {
    /// Project and name.
    pub queue: QueueRef,
    /// The settings; `dead_letter_queue: None` means `<name>-dlq`, created
    /// along with the queue if missing.
    pub settings: QueueSettings,
    /// The time of the call.
    pub now: Timestamp,
}

/// What `queue_create` did.
#[derive(Debug, Clone)]
pub struct QueueCreated {
    /// The queue as stored.
    pub record: QueueRecord,
    /// False when an identical queue already existed.
    pub created: bool,
}

/// `queue_update`: changes some settings of an existing queue; they apply
/// to hand-outs from then on (messages already in flight keep their lease).
#[derive(Debug, Clone)]
pub struct QueueUpdate {
    /// Project and name.
    pub queue: QueueRef,
    /// What to change.
    pub changes: QueueChanges,
    /// The time of the call.
    pub now: Timestamp,
}

/// `queue_pause`: pauses or resumes a queue (queue-api-2.md §6).
#[derive(Debug, Clone)]
pub struct QueuePause {
    /// Project and name.
    pub queue: QueueRef,
    /// True to pause, false to resume; either is idempotent.
    pub paused: bool,
}

/// The settings a `queue_update` changes; `None` keeps one as it is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueueChanges {
    /// The type the caller states: a queue's type is fixed at create, so
    /// another one is `Invalid` (the same one changes nothing).
    pub queue_type: Option<QueueType>,
    /// A new dead-letter queue: it must exist (`DeadLetterQueueNotFound`),
    /// be a standard queue and not the queue itself (`Invalid`), as on
    /// create.
    pub dead_letter_queue: Option<String>,
    /// A new `max_retries`.
    pub max_retries: Option<i32>,
    /// A new retention.
    pub message_retention_days: Option<i32>,
    /// A new default lease.
    pub visibility_timeout_default: Option<i32>,
    /// Whether publishes may set a priority.
    pub enable_priority: Option<bool>,
    /// A new retry backoff (`Some(None)` removes it).
    pub retry_backoff: Option<Option<onceq_types::RetryBackoff>>,
    /// A new `max_in_flight` (`Some(None)` removes it).
    pub max_in_flight: Option<Option<i32>>,
    /// A new `rate_per_sec` (`Some(None)` removes it); its token bucket
    /// starts full again.
    pub rate_per_sec: Option<Option<f64>>,
    /// How long acked and cancelled messages are kept from then on.
    pub completed_retention_seconds: Option<i32>,
}
