//! How a worker runs: its queue, its limits, its leases and its backoffs.

use std::time::Duration;

use rand::Rng;

use crate::{clock::Clock, failpoint::FailPoints};

/// Exponential backoff with "equal jitter": retry `n` (1-based) waits a
/// random time between half and all of `min(max, base * 2^(n-1))`. Never
/// zero unless `base` is, so a loop driven by it cannot spin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The cap of the first wait; doubles each time.
    pub base: Duration,
    /// The largest wait.
    pub max: Duration,
}

impl Backoff {
    /// No wait at all (tests; or nacks that should come straight back).
    pub const fn none() -> Self {
        Self {
            base: Duration::ZERO,
            max: Duration::ZERO,
        }
    }

    /// The wait before retry number `attempt` (1-based; 0 counts as 1).
    pub fn delay(&self, attempt: u32) -> Duration {
        let cap = self
            .base
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(20))
            .min(self.max);
        let half = cap / 2;
        half + half.mul_f64(rand::rng().random::<f64>())
    }
}

/// Configuration of a [`Worker`](super::Worker). Build it with
/// [`WorkerConfig::new`] and change the public fields.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// The queue to consume.
    pub queue: String,
    /// Jobs handled at once (semaphore permits). Default 8. The pool needs
    /// a connection per running job; heartbeats use one connection of
    /// their own, outside the pool, so they go on when every pooled
    /// connection is held.
    pub concurrency: usize,
    /// Messages per consume, 1..=10. Default 10.
    pub batch: u32,
    /// Long poll of [`run`](super::Worker::run), 0..=20 s. Default 20.
    pub wait_seconds: u32,
    /// Message lease asked for on consume and on each heartbeat. Default 30 s.
    pub visibility_timeout: u32,
    /// How often a running job extends its message lease and its fact's
    /// lease. Default 10 s (a third of the visibility timeout); keep it well
    /// below both leases.
    pub heartbeat: Duration,
    /// How long a claimed fact stays ours without a heartbeat; after it a
    /// crashed worker's fact is taken over. Default 60 s.
    pub fact_lease: Duration,
    /// Delay of the nack after a failed job, by delivery count. Default
    /// 2 s doubling up to 5 min.
    pub retry: Backoff,
    /// Wait after a failed consume (server unreachable), by consecutive
    /// failures; also the pause between empty polls when `wait_seconds` is
    /// 0. Default 250 ms doubling up to 30 s; a longer `Retry-After` wins.
    pub poll_backoff: Backoff,
    /// How long [`run`](super::Worker::run) lets running jobs finish after
    /// shutdown; jobs still running then are released. Default 30 s.
    pub shutdown_grace: Duration,
    /// Acks go in batches (default true): a job whose work is done hands
    /// its ack in, and the acks waiting go out with the next consume (its
    /// `acks`) or, when none comes within `ack_linger`, in one
    /// `ack_batch`. False: each job acks with a call of its own, as the
    /// seed's worker does. Either way the fact is `done` before its ack is
    /// sent, so a lost ack means a redelivery acked without rerunning.
    pub batch_acks: bool,
    /// How long a handed-in ack waits for a consume to carry it before it
    /// goes out in an `ack_batch`. Default 20 ms.
    pub ack_linger: Duration,
    /// Owner written on facts. Default a UUID v7.
    pub worker_id: String,
    /// Where fact leases read the time.
    pub clock: Clock,
    /// Crash points for tests (see the `worker::*` constants).
    pub fail_points: FailPoints,
}

impl WorkerConfig {
    /// Defaults for `queue`.
    pub fn new(queue: impl Into<String>) -> Self {
        Self {
            queue: queue.into(),
            concurrency: 8,
            batch: 10,
            wait_seconds: 20,
            visibility_timeout: 30,
            heartbeat: Duration::from_secs(10),
            fact_lease: Duration::from_secs(60),
            retry: Backoff {
                base: Duration::from_secs(2),
                max: Duration::from_secs(300),
            },
            poll_backoff: Backoff {
                base: Duration::from_millis(250),
                max: Duration::from_secs(30),
            },
            shutdown_grace: Duration::from_secs(30),
            batch_acks: true,
            ack_linger: Duration::from_millis(20),
            worker_id: uuid::Uuid::now_v7().to_string(),
            clock: Clock::System,
            fail_points: FailPoints::new(),
        }
    }

    /// Refuses settings the server would refuse or that cannot work.
    pub(crate) fn validate(&self) -> Result<(), String> {
        if !onceq_types::names::is_addressable_queue_name(&self.queue) {
            return Err(format!("invalid queue name {:?}", self.queue));
        }
        if self.concurrency == 0 {
            return Err("concurrency must be at least 1".into());
        }
        if !(1..=onceq_types::MAX_BATCH as u32).contains(&self.batch) {
            return Err("batch must be 1..=10".into());
        }
        if self.wait_seconds > onceq_types::MAX_WAIT_SECONDS as u32 {
            return Err("wait_seconds must be 0..=20".into());
        }
        if self.visibility_timeout == 0
            || i64::from(self.visibility_timeout) > onceq_types::MAX_VISIBILITY_TIMEOUT_SECONDS
        {
            return Err("visibility_timeout must be 1..=43200".into());
        }
        if self.heartbeat.is_zero() || self.fact_lease < Duration::from_secs(1) {
            return Err("heartbeat must be positive and fact_lease at least 1 s".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_is_capped_and_never_spins() {
        let b = Backoff {
            base: Duration::from_millis(100),
            max: Duration::from_secs(1),
        };
        for attempt in 1..40 {
            let cap = (b.base * 2u32.pow(attempt.min(20) - 1)).min(b.max);
            let d = b.delay(attempt);
            assert!(d >= cap / 2 && d <= cap, "{attempt}: {d:?}");
        }
        assert_eq!(Backoff::none().delay(3), Duration::ZERO);
    }

    #[test]
    fn defaults_are_valid() {
        assert_eq!(WorkerConfig::new("jobs").validate(), Ok(()));
        let bad = WorkerConfig {
            batch: 11,
            ..WorkerConfig::new("jobs")
        };
        assert!(bad.validate().is_err());
    }
}
