//! What `/metrics` reads.

use super::QueueRef;
use jiff::Timestamp;

/// How many messages one queue holds, by state: what `/metrics` exports as
/// gauges (`queue_depths`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueDepth {
    /// The queue.
    pub queue: QueueRef,
    /// Ready now (due delayed messages included, as in `QueueStats`).
    pub available: i64,
    /// Waiting for their delay.
    pub delayed: i64,
    /// Under a lease.
    pub in_flight: i64,
    /// Held by its dead-letter queue (0 without one).
    pub dead_lettered: i64,
    /// When the first message it holds in publish order (lowest `seq`) was
    /// stored; `None` when empty. The same as the oldest `created_at` except
    /// after a redrive into a FIFO queue, which appends old messages at
    /// their group's tail.
    pub oldest_created_at: Option<Timestamp>,
    /// Paused: nothing is handed out.
    pub paused: bool,
}

/// A connection pool's use at one moment (`Store::pool_stats`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolStats {
    /// Which pool: `postgres`, `sqlite_readers` or `sqlite_writer`.
    pub pool: &'static str,
    /// The most connections it may hold (`None`: opened on demand, no cap).
    pub max_size: Option<usize>,
    /// Connections open now.
    pub size: usize,
    /// Open and idle.
    pub available: usize,
    /// Callers waiting for a connection (for the SQLite writer: requests
    /// queued for its thread).
    pub waiting: usize,
}
