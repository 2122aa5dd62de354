//! Queues.

use super::QueueRef;
use jiff::Timestamp;
use onceq_types::QueueRecord;
use onceq_types::queue::QueueSettings;

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
