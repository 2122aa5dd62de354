//! Background passes: lease expiry.

use super::QueueRef;

/// What one `lease_expire` pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LeaseExpiry {
    /// Expired leases returned to their queue.
    pub requeued: u64,
    /// Expired leases that were the message's last allowed hand-out.
    pub dead_lettered: u64,
    /// The same counts split by the queue the leases were on (the source
    /// queue, not the DLQ), ordered by project then name. Only queues with
    /// an expiry appear. Feeds the per-queue metrics.
    pub by_queue: Vec<QueueLeaseExpiry>,
}

/// The expired leases of one queue in a `lease_expire` pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueLeaseExpiry {
    /// The queue the leases were on.
    pub queue: QueueRef,
    /// Returned to it.
    pub requeued: u64,
    /// Moved to its dead-letter queue.
    pub dead_lettered: u64,
}

impl LeaseExpiry {
    /// Totals and per-queue counts from one entry per queue, in any order.
    pub(crate) fn from_queues(mut by_queue: Vec<QueueLeaseExpiry>) -> Self {
        by_queue.sort_by(|a, b| {
            (&a.queue.project, &a.queue.queue).cmp(&(&b.queue.project, &b.queue.queue))
        });
        Self {
            requeued: by_queue.iter().map(|q| q.requeued).sum(),
            dead_lettered: by_queue.iter().map(|q| q.dead_lettered).sum(),
            by_queue,
        }
    }
}
