//! The worker runtime: at-least-once delivery in, exactly-once effects out
//! (key 3 of `three-keys.md`: the job fact).
//!
//! - [`config`]: [`WorkerConfig`] and [`Backoff`].
//! - [`fact`]: what a message's work is called ([`job_fact`]) and the
//!   `onceq_job_facts` rows (SQL in the crate's `sql/job_fact/postgres/`).
//! - `job`: one message from claim to ack (the state machine below);
//!   `settle`: its endings (ack, defer, release and nack); `acks`: acks
//!   handed in to go in batches (the next consume's `acks`, or
//!   `ack_batch`); `beat_link`: the heartbeats' own connection, outside
//!   the pool.
//! - `runner`: [`Worker`]: building one, `run_once`, `drain`.
//! - `poll`: [`Worker::run`]: long polling, concurrency, backoff, shutdown.
//! - [`metrics`]: [`Tick`] and [`WorkerMetrics`].
//!
//! # A job fact's states
//!
//! One row per fact in `onceq_job_facts`: `running` (held by one attempt
//! until its `locked_until`) or `done`; *absent* is no row. Which
//! statement (`sql/job_fact/postgres/`, shared with the Node package)
//! makes each move is drawn in the repository's `docs/state-machines.md`
//! ("A job fact"). All times come from the worker's
//! [`Clock`](crate::clock::Clock), never from the database's `now()`.
//!
//! # One message
//!
//! ```text
//! consume ─▶ claim fact (one statement, claim.sql)
//!   ├─ done ─────────────────────────▶ ack(receipt)                       [duplicate]
//!   ├─ running, live, not this attempt ▶ nack(receipt, delay = lease left) [deferred]
//!   │     (never ack: the holder may still fail — hole 2)
//!   └─ ours (new, or expired lease taken over — hole 1)
//!        ▼                                         ⚡ worker.after_fact_claim
//!      BEGIN; handler(job, tx)  ‖ heartbeat every `heartbeat`: extend(receipt),
//!        │                          push the fact's locked_until
//!        ├─ Err ─▶ ROLLBACK; release fact; nack(receipt, backoff)   [failed]
//!        │           └─ answer dead_lettered ─▶ warn + count           [dead_lettered]
//!        ▼                                         ⚡ worker.mid_work
//!      UPDATE fact SET done WHERE claim = mine AND running  (row lock)
//!        ├─ 0 rows (taken over) ─▶ ROLLBACK; leave the message        [superseded]
//!        ▼                                         ⚡ worker.after_work
//!      COMMIT  (effects and `done` together — hole 3)
//!        ▼                                         ⚡ worker.after_done
//!      ack(receipt) (hole 4); acked:false ─▶ fine, the next holder finds `done` [ack_lost]
//!        │  (batch_acks, the default: handed in, the slot freed, and sent
//!        │   with the next consume or in one ack_batch; same answer)
//!        ▼                                         ⚡ worker.after_ack
//!      [done]
//! ```
//!
//! A fail point (⚡) that fires abandons the job on the spot with no
//! cleanup, as a killed process would: the open transaction is dropped
//! (rolled back), the fact and the message lease are left to expire.
//!
//! Deferring is a nack, so it uses up one of the message's hand-outs; with
//! heartbeats it only happens when a holder stalls, and a message deferred
//! into the dead-letter queue still has its work done by the live holder
//! (a redrive then finds the fact `done` and acks).
//!
//! # Example
//!
//! ```no_run
//! use onceq::worker::{Handler, Job, Worker, WorkerConfig};
//! use tokio_util::sync::CancellationToken;
//!
//! struct Exports;
//!
//! #[async_trait::async_trait]
//! impl Handler for Exports {
//!     async fn handle(
//!         &self,
//!         job: &Job,
//!         tx: &tokio_postgres::Transaction<'_>,
//!     ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//!         tx.execute("INSERT INTO exports (job_fact) VALUES ($1)", &[&job.fact]).await?;
//!         Ok(())
//!     }
//! }
//!
//! # async fn demo(pool: deadpool_postgres::Pool) -> Result<(), Box<dyn std::error::Error>> {
//! let client = onceq::Client::new("http://127.0.0.1:8787", "oq_...")?;
//! let worker = Worker::new(client, pool, WorkerConfig::new("exports"), Exports).await?;
//! let shutdown = CancellationToken::new();
//! // e.g. cancel on SIGTERM: tokio::signal::unix::signal(SignalKind::terminate())
//! worker.run(shutdown).await?;
//! # Ok(()) }
//! ```
#![cfg(feature = "postgres")]

mod acks;
mod beat_link;
pub mod config;
mod error;
pub mod fact;
mod job;
pub mod metrics;
mod poll;
mod runner;
mod settle;

pub use config::{Backoff, WorkerConfig};
pub use error::WorkerError;
pub use fact::job_fact;
pub use metrics::{Tick, WorkerMetrics};
pub use runner::Worker;

/// Fail point: the fact is claimed, the handler has not started.
pub const AFTER_FACT_CLAIM: &str = "worker.after_fact_claim";
/// Fail point: inside the transaction, the handler ran, the fact is not
/// marked done.
pub const MID_WORK: &str = "worker.mid_work";
/// Fail point: the `done` mark is written but not committed.
pub const AFTER_WORK: &str = "worker.after_work";
/// Fail point: committed, not acked.
pub const AFTER_DONE: &str = "worker.after_done";
/// Fail point: acked.
pub const AFTER_ACK: &str = "worker.after_ack";

/// The work of a job. One value serves every job; keep per-job state in
/// the transaction or in the job itself.
#[async_trait::async_trait]
pub trait Handler: Send + Sync + 'static {
    /// Does the work. Effects written through `tx` commit together with the
    /// job fact's `done` mark, exactly once. Effects elsewhere (a charge, an
    /// email) should pass [`Job::fact`] downstream as their idempotency key:
    /// a crash after them and before the commit runs the handler again.
    /// An `Err` rolls `tx` back, releases the fact and nacks with backoff,
    /// the error's text (its first 8 KiB) going with the nack as the
    /// attempt's `error` and the message's `last_error`. To hand the server
    /// what the work produced, call [`Job::set_result`] before `Ok`.
    async fn handle(
        &self,
        job: &Job,
        tx: &tokio_postgres::Transaction<'_>,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>>;
}

/// A message being worked on.
#[derive(Debug, Clone)]
pub struct Job {
    /// The message as consumed (id, receipt, delivery count, key).
    pub message: onceq_types::ConsumedMessage,
    /// The payload, parsed.
    pub payload: serde_json::Value,
    /// The job fact (see [`job_fact`]).
    pub fact: String,
    /// The queue it came from.
    pub queue: String,
    /// What [`Job::set_result`] stored, sent with the ack.
    result: std::sync::Arc<std::sync::Mutex<Option<Box<serde_json::value::RawValue>>>>,
}

impl Job {
    /// Sets what the work produced (any JSON, at most 64 KiB as compact
    /// JSON): the worker sends it with its ack, and the server keeps it as
    /// the message's `result` while the queue retains completed messages
    /// (`completed_retention_seconds`). A result too large makes the ack
    /// fail (413); the message then comes back and is found done.
    pub fn set_result(&self, result: &impl serde::Serialize) -> Result<(), serde_json::Error> {
        let raw = serde_json::value::to_raw_value(result)?;
        *self.result.lock().unwrap_or_else(|e| e.into_inner()) = Some(raw);
        Ok(())
    }

    /// The result set so far, if any.
    pub(super) fn result(&self) -> Option<Box<serde_json::value::RawValue>> {
        self.result
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}
