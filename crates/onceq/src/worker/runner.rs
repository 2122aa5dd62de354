//! [`Worker`]: building one, and driving it by hand ([`Worker::run_once`],
//! [`Worker::drain`]); the long-running loop is in `poll`.

use std::{fmt, sync::Arc, time::Duration};

use jiff::{SignedDuration, Timestamp};
use onceq_types::ConsumedMessage;
use tokio::{
    sync::{OwnedSemaphorePermit, Semaphore},
    task::JoinSet,
};
use tokio_util::sync::CancellationToken;

use super::{
    Handler, WorkerConfig, WorkerError,
    acks::{self, Acks},
    beat_link::BeatLink,
    fact,
    metrics::{Counters, Outcome, Tick, WorkerMetrics},
};
use crate::{Client, ConsumeOptions, Error};

/// A worker on one queue. Cheap to clone: clones share the same counters
/// and concurrency bound.
#[derive(Clone)]
pub struct Worker {
    pub(super) inner: Arc<Inner>,
}

/// What every job task shares.
pub(crate) struct Inner {
    pub client: Client,
    pub pool: deadpool_postgres::Pool,
    /// Heartbeats' connection, outside `pool` (see `beat_link`).
    pub beat_link: BeatLink,
    pub config: WorkerConfig,
    pub fact_lease: SignedDuration,
    pub handler: Box<dyn Handler>,
    pub counters: Counters,
    pub permits: Arc<Semaphore>,
    /// Acks handed in, for the next consume or the flusher (`acks`).
    pub acks: Arc<Acks>,
    /// Stops the flusher (after it sent what is left) with the worker.
    _flusher: tokio_util::sync::DropGuard,
}

impl fmt::Debug for Worker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Worker")
            .field("config", &self.inner.config)
            .field("metrics", &self.metrics())
            .finish_non_exhaustive()
    }
}

impl Worker {
    /// A worker that consumes `config.queue` with `client` and keeps its job
    /// facts in `pool`'s database, creating the `onceq_job_facts` table if
    /// it is missing (safe when many workers start at once).
    pub async fn new(
        client: Client,
        pool: deadpool_postgres::Pool,
        config: WorkerConfig,
        handler: impl Handler,
    ) -> Result<Self, WorkerError> {
        config.validate().map_err(WorkerError::Config)?;
        let fact_lease = SignedDuration::try_from(config.fact_lease)
            .map_err(|e| WorkerError::Config(format!("fact_lease: {e}")))?;
        let visibility = Duration::from_secs(config.visibility_timeout.into());
        if config.heartbeat >= visibility.min(config.fact_lease) {
            tracing::warn!(heartbeat = ?config.heartbeat, ?visibility, fact_lease = ?config.fact_lease,
                "heartbeat is not shorter than the leases it keeps: long jobs will be deferred or taken over");
        }
        let mut db = pool.get().await?;
        fact::ensure_schema(&mut db).await?;
        drop(db);
        let permits = Arc::new(Semaphore::new(config.concurrency));
        let pending = Arc::new(Acks::default());
        let flusher = acks::flusher(
            pending.clone(),
            client.clone(),
            config.queue.clone(),
            config.ack_linger,
        );
        Ok(Self {
            inner: Arc::new(Inner {
                acks: pending,
                _flusher: flusher,
                client,
                beat_link: BeatLink::new(pool.clone()),
                pool,
                config,
                fact_lease,
                handler: Box::new(handler),
                counters: Counters::default(),
                permits,
            }),
        })
    }

    /// Counters since the worker was built.
    pub fn metrics(&self) -> WorkerMetrics {
        self.inner.counters.snapshot()
    }

    /// The configuration it runs with.
    pub fn config(&self) -> &WorkerConfig {
        &self.inner.config
    }

    /// One consume without long polling, then every message it got,
    /// concurrently up to `concurrency`, their acks in one `ack_batch`
    /// (with `batch_acks`); returns when all have settled.
    /// A queue that does not exist yet counts as empty.
    pub async fn run_once(&self) -> Result<Tick, WorkerError> {
        let inner = &self.inner;
        let messages = match inner.consume(inner.config.batch, 0).await {
            Ok(m) => m,
            Err(Error::QueueNotFound(_)) => Vec::new(),
            Err(e) => return Err(e.into()),
        };
        let mut tick = Tick {
            received: messages.len() as u64,
            ..Tick::default()
        };
        let never = CancellationToken::new();
        let mut jobs = JoinSet::new();
        for message in messages {
            let permit = inner
                .permits
                .clone()
                .acquire_owned()
                .await
                .expect("the worker never closes its semaphore");
            jobs.spawn(guarded(inner.clone(), message, never.clone(), permit));
        }
        if inner.config.batch_acks && tick.received > 0 {
            // Every job has handed its ack in (or ended otherwise) once its
            // slot is back: send them now, in one `ack_batch`, rather than
            // after the linger.
            let slots = u32::try_from(inner.config.concurrency).unwrap_or(u32::MAX);
            drop(inner.permits.acquire_many(slots).await);
            acks::flush(&inner.acks, &inner.client, &inner.config.queue).await;
        }
        while let Some(joined) = jobs.join_next().await {
            tick.record(joined.unwrap_or(Outcome::Crashed));
        }
        Ok(tick)
    }

    /// [`run_once`](Self::run_once) until a consume comes back empty; the
    /// sum of the ticks. Messages nacked with a delay or left in flight by
    /// a crash are not visible, so this ends.
    pub async fn drain(&self) -> Result<Tick, WorkerError> {
        let mut total = Tick::default();
        loop {
            let tick = self.run_once().await?;
            total += tick;
            if tick.received == 0 {
                return Ok(total);
            }
        }
    }

    /// Deletes `done` facts finished before `before`; returns how many.
    /// Keep facts longer than a message can live (the queue's retention,
    /// and the publish dedupe window): a fact purged too early lets a late
    /// redelivery do the work again.
    pub async fn purge_done_facts(&self, before: Timestamp) -> Result<u64, WorkerError> {
        let db = self.inner.pool.get().await?;
        Ok(fact::purge(&**db, before).await?)
    }
}

impl Inner {
    pub(crate) async fn consume(
        &self,
        max: u32,
        wait_seconds: u32,
    ) -> Result<Vec<ConsumedMessage>, Error> {
        self.counters
            .polls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let opts = ConsumeOptions {
            max_messages: max,
            visibility_timeout: Some(self.config.visibility_timeout),
            wait_seconds,
        };
        let queue = &self.config.queue;
        if !self.config.batch_acks {
            return self.client.consume(queue, opts).await;
        }
        // The acks handed in so far go with it, applied before the claim.
        let taken = self.acks.take();
        let sent = acks::entries(&taken);
        match self.client.consume_acking(queue, opts, sent).await {
            Ok(answer) => {
                acks::settle(taken, answer.acks.as_ref());
                Ok(answer.items)
            }
            Err(e) => {
                // Perhaps applied, perhaps not: a redelivery finds the fact
                // done either way.
                acks::settle(taken, None);
                Err(e)
            }
        }
    }
}

/// Runs one job in its own task so that a panicking handler is counted
/// (as a crash: its fact and lease simply expire) instead of vanishing.
pub(crate) async fn guarded(
    inner: Arc<Inner>,
    message: ConsumedMessage,
    abandon: CancellationToken,
    permit: OwnedSemaphorePermit,
) -> Outcome {
    let counters = inner.clone();
    let job = tokio::spawn(async move { inner.process(message, &abandon).await });
    let settled = match job.await {
        Ok(settled) => settled,
        Err(e) => {
            tracing::error!(error = %e, "job task panicked; its fact and lease will expire");
            Outcome::Crashed.into()
        }
    };
    // The slot is free once the work is: a handed-in ack goes out with a
    // later consume (which this slot lets the poll loop make).
    drop(permit);
    let outcome = settled.acked().await;
    counters.counters.record(outcome);
    outcome
}
