//! What a worker did: per message (`Outcome`), per tick ([`Tick`]) and
//! since it started ([`WorkerMetrics`]).

use std::{
    ops::AddAssign,
    sync::atomic::{AtomicU64, Ordering::Relaxed},
    time::Duration,
};

/// How one message ended, as far as this worker is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Work committed with its fact; `ack_lost` when the ack answered false
    /// or failed (the next holder finds the fact done and acks).
    Done { ack_lost: bool },
    /// The fact was done already: acked without work.
    Duplicate { ack_lost: bool },
    /// Another live attempt holds the fact: nacked with a delay.
    Deferred { dead_lettered: bool },
    /// The handler or the database failed: rolled back, released, nacked.
    Failed { dead_lettered: bool },
    /// Our fact was taken over while we worked: rolled back, message left.
    Superseded,
    /// A fail point fired: abandoned with no cleanup at all.
    Crashed,
    /// Still running when the shutdown grace ran out: released, nacked.
    Abandoned,
}

/// How a job ended, with its ack still to be answered when it was handed
/// in to go in a batch (`acks`).
pub(crate) struct Settled {
    pub outcome: Outcome,
    pub ack: Option<tokio::sync::oneshot::Receiver<bool>>,
}

impl From<Outcome> for Settled {
    fn from(outcome: Outcome) -> Self {
        Self { outcome, ack: None }
    }
}

impl Settled {
    /// The outcome once its ack (if handed in) is answered: `ack_lost`
    /// when it did not end its lease.
    pub(crate) async fn acked(self) -> Outcome {
        let Some(ack) = self.ack else {
            return self.outcome;
        };
        let lost = !ack.await.unwrap_or(false);
        match self.outcome {
            Outcome::Done { .. } => Outcome::Done { ack_lost: lost },
            Outcome::Duplicate { .. } => Outcome::Duplicate { ack_lost: lost },
            other => other,
        }
    }
}

/// Counts of one [`run_once`](super::Worker::run_once) or
/// [`drain`](super::Worker::drain).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tick {
    /// Messages consumed.
    pub received: u64,
    /// Jobs whose work committed.
    pub done: u64,
    /// Messages acked as duplicates of done work.
    pub duplicates: u64,
    /// Messages left for a live holder of their fact (nacked with delay).
    pub deferred: u64,
    /// Jobs that failed and were nacked.
    pub failed: u64,
    /// Nacks (failed or deferred) the server answered by dead-lettering.
    pub dead_lettered: u64,
    /// Jobs stopped by a fail point.
    pub crashed: u64,
    /// Jobs whose fact another worker took over meanwhile (rolled back).
    pub superseded: u64,
    /// Jobs released at the end of a shutdown grace.
    pub abandoned: u64,
    /// Acks answered `acked: false` or not answered.
    pub ack_lost: u64,
}

impl Tick {
    pub(crate) fn record(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Done { ack_lost } => {
                self.done += 1;
                self.ack_lost += u64::from(ack_lost);
            }
            Outcome::Duplicate { ack_lost } => {
                self.duplicates += 1;
                self.ack_lost += u64::from(ack_lost);
            }
            Outcome::Deferred { dead_lettered } => {
                self.deferred += 1;
                self.dead_lettered += u64::from(dead_lettered);
            }
            Outcome::Failed { dead_lettered } => {
                self.failed += 1;
                self.dead_lettered += u64::from(dead_lettered);
            }
            Outcome::Superseded => self.superseded += 1,
            Outcome::Crashed => self.crashed += 1,
            Outcome::Abandoned => self.abandoned += 1,
        }
    }
}

impl AddAssign for Tick {
    fn add_assign(&mut self, o: Self) {
        self.received += o.received;
        self.done += o.done;
        self.duplicates += o.duplicates;
        self.deferred += o.deferred;
        self.failed += o.failed;
        self.dead_lettered += o.dead_lettered;
        self.crashed += o.crashed;
        self.superseded += o.superseded;
        self.abandoned += o.abandoned;
        self.ack_lost += o.ack_lost;
    }
}

/// Counters since the worker was built ([`Worker::metrics`](super::Worker::metrics)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkerMetrics {
    /// Jobs whose work committed.
    pub done: u64,
    /// Messages acked as duplicates of done work.
    pub duplicates_acked: u64,
    /// Messages left for a live holder of their fact.
    pub deferred: u64,
    /// Jobs that failed and were nacked.
    pub failed: u64,
    /// Nacks the server answered by dead-lettering.
    pub dead_lettered: u64,
    /// Acks answered `acked: false` or not answered.
    pub ack_lost: u64,
    /// Jobs stopped by a fail point.
    pub crashed: u64,
    /// Jobs rolled back because their fact was taken over.
    pub superseded: u64,
    /// Jobs released at the end of a shutdown grace.
    pub abandoned: u64,
    /// Heartbeats that pushed both leases, the message's and the fact's.
    pub heartbeats: u64,
    /// Heartbeats that left a lease where it was: the extend or the fact
    /// push failed, timed out, or found the lease no longer the job's.
    pub heartbeat_misses: u64,
    /// Consume calls made.
    pub polls: u64,
    /// Consume calls that failed (each followed by a backoff).
    pub poll_errors: u64,
    /// Backoff waits completed after failed polls.
    pub backoffs: u64,
    /// Time spent in those waits, measured, in milliseconds.
    pub backoff_ms: u64,
}

/// The live counters behind [`WorkerMetrics`].
#[derive(Debug, Default)]
pub(crate) struct Counters {
    done: AtomicU64,
    duplicates_acked: AtomicU64,
    deferred: AtomicU64,
    failed: AtomicU64,
    dead_lettered: AtomicU64,
    ack_lost: AtomicU64,
    crashed: AtomicU64,
    superseded: AtomicU64,
    abandoned: AtomicU64,
    heartbeats: AtomicU64,
    heartbeat_misses: AtomicU64,
    pub polls: AtomicU64,
    poll_errors: AtomicU64,
    backoffs: AtomicU64,
    backoff_ms: AtomicU64,
}

impl Counters {
    pub(crate) fn record(&self, outcome: Outcome) {
        let mut t = Tick::default();
        t.record(outcome);
        self.done.fetch_add(t.done, Relaxed);
        self.duplicates_acked.fetch_add(t.duplicates, Relaxed);
        self.deferred.fetch_add(t.deferred, Relaxed);
        self.failed.fetch_add(t.failed, Relaxed);
        self.dead_lettered.fetch_add(t.dead_lettered, Relaxed);
        self.ack_lost.fetch_add(t.ack_lost, Relaxed);
        self.crashed.fetch_add(t.crashed, Relaxed);
        self.superseded.fetch_add(t.superseded, Relaxed);
        self.abandoned.fetch_add(t.abandoned, Relaxed);
    }

    /// One heartbeat: `pushed` when both leases moved on.
    pub(crate) fn beat(&self, pushed: bool) {
        let counter = if pushed {
            &self.heartbeats
        } else {
            &self.heartbeat_misses
        };
        counter.fetch_add(1, Relaxed);
    }

    pub(crate) fn poll_failed(&self) {
        self.poll_errors.fetch_add(1, Relaxed);
    }

    pub(crate) fn backed_off(&self, slept: Duration) {
        let ms = u64::try_from(slept.as_millis()).unwrap_or(u64::MAX);
        self.backoffs.fetch_add(1, Relaxed);
        self.backoff_ms.fetch_add(ms, Relaxed);
    }

    pub(crate) fn snapshot(&self) -> WorkerMetrics {
        WorkerMetrics {
            done: self.done.load(Relaxed),
            duplicates_acked: self.duplicates_acked.load(Relaxed),
            deferred: self.deferred.load(Relaxed),
            failed: self.failed.load(Relaxed),
            dead_lettered: self.dead_lettered.load(Relaxed),
            ack_lost: self.ack_lost.load(Relaxed),
            crashed: self.crashed.load(Relaxed),
            superseded: self.superseded.load(Relaxed),
            abandoned: self.abandoned.load(Relaxed),
            heartbeats: self.heartbeats.load(Relaxed),
            heartbeat_misses: self.heartbeat_misses.load(Relaxed),
            polls: self.polls.load(Relaxed),
            poll_errors: self.poll_errors.load(Relaxed),
            backoffs: self.backoffs.load(Relaxed),
            backoff_ms: self.backoff_ms.load(Relaxed),
        }
    }
}
