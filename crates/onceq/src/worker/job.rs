//! One message, start to end: claim its fact, do the work with a heartbeat,
//! commit the effects with the `done` mark, ack — or release and nack.
//! Every step's order is the point; see the state machine in `mod.rs`.

use std::convert::Infallible;

use onceq_types::ConsumedMessage;
use tokio::time::{Instant, MissedTickBehavior};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::{
    AFTER_ACK, AFTER_DONE, AFTER_FACT_CLAIM, AFTER_WORK, Job, MID_WORK,
    fact::{self, Claim, Hold},
    metrics::{Outcome, Settled},
    runner::Inner,
};
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// How the transactional part of a job ended.
enum Work {
    Committed,
    Failed(BoxError),
    Superseded,
    Crashed,
    Abandoned,
}

impl Job {
    fn new(message: ConsumedMessage) -> Self {
        // The server only hands out valid JSON; `null` if that ever breaks,
        // so the fact falls back to the key or the message id.
        let payload = serde_json::from_str(message.payload.get()).unwrap_or_default();
        Self {
            fact: fact::job_fact(&payload, &message),
            queue: message.queue.clone(),
            payload,
            message,
            result: Default::default(),
        }
    }
}

impl Job {
    /// The span a message is processed in (OpenTelemetry's messaging
    /// conventions: `process {queue}`, kind consumer), a child of the
    /// message's `traceparent` with the `otel` feature. The client's ack or
    /// nack inside it carries its trace context to the server.
    fn span(&self) -> tracing::Span {
        let span = tracing::info_span!(
            "process",
            otel.name = tracing::field::Empty,
            otel.kind = "consumer",
            messaging.system = "onceq",
            messaging.operation.type = "process",
            messaging.destination.name = %self.queue,
            messaging.message.id = %self.message.message_id,
            messaging.message.delivery_count = self.message.delivery_count,
        );
        if !span.is_disabled() {
            span.record("otel.name", format!("process {}", self.queue));
        }
        // Its parent is the publisher's span, from the message's headers.
        crate::trace_context::adopt(&span, &self.message.headers);
        span
    }
}

impl Inner {
    /// Processes one message; its caller counts how it ended, once its ack
    /// (if handed in to a batch) is answered.
    pub(crate) async fn process(
        &self,
        message: ConsumedMessage,
        abandon: &CancellationToken,
    ) -> Settled {
        let job = Job::new(message);
        let settled = self.attempt(&job, abandon).instrument(job.span()).await;
        let outcome = settled.outcome;
        tracing::debug!(message_id = %job.message.message_id, fact = %job.fact, ?outcome, "job settled");
        settled
    }

    async fn attempt(&self, job: &Job, abandon: &CancellationToken) -> Settled {
        let token = uuid::Uuid::new_v4().to_string();
        let hold = Hold {
            fact: &job.fact,
            claim: &token,
        };
        let mut db = match self.pool.get().await {
            Ok(db) => db,
            Err(e) => return self.fail(job, None, &e).await.into(),
        };
        let now = self.config.clock.now();
        match hold
            .claim(&**db, &self.config.worker_id, now, now + self.fact_lease)
            .await
            .map(|c| c.state)
        {
            Err(e) => return self.fail(job, None, &e).await.into(),
            Ok(Claim::Done) => return self.duplicate(job).await,
            Ok(Claim::HeldUntil(until)) => {
                return self.defer(job, until.duration_since(now)).await.into();
            }
            Ok(Claim::Mine) => {}
        }
        if self.crash(AFTER_FACT_CLAIM, job) {
            return Outcome::Crashed.into();
        }
        match self.work(&mut db, job, &hold, abandon).await {
            Work::Committed => {}
            Work::Crashed => return Outcome::Crashed.into(),
            Work::Superseded => {
                tracing::info!(message_id = %job.message.message_id, fact = %job.fact,
                    "fact taken over by another worker while we worked; rolled back");
                return Outcome::Superseded.into();
            }
            Work::Abandoned => {
                tracing::warn!(message_id = %job.message.message_id, fact = %job.fact,
                    "shutdown grace over: job released");
                self.release(&db, &hold).await;
                let why = "the worker shut down before the job finished";
                self.nack(job, 0, Some(why.to_owned())).await;
                return Outcome::Abandoned.into();
            }
            Work::Failed(e) => return self.fail(job, Some((&db, &hold)), &e).await.into(),
        }
        if self.crash(AFTER_DONE, job) {
            return Outcome::Crashed.into();
        }
        let acked = self.ack_done(job).await;
        if self.crash(AFTER_ACK, job) {
            return Outcome::Crashed.into();
        }
        acked.settled(|ack_lost| Outcome::Done { ack_lost })
    }

    /// The handler and the `done` mark in one transaction, with a heartbeat
    /// while the handler runs. Returning early drops the transaction, which
    /// rolls it back.
    async fn work(
        &self,
        db: &mut tokio_postgres::Client,
        job: &Job,
        hold: &Hold<'_>,
        abandon: &CancellationToken,
    ) -> Work {
        let tx = match db.transaction().await {
            Ok(tx) => tx,
            Err(e) => return Work::Failed(e.into()),
        };
        let handled = tokio::select! {
            r = self.handler.handle(job, &tx) => r,
            never = self.heartbeat(job, hold) => match never {},
            () = abandon.cancelled() => return Work::Abandoned,
        };
        if let Err(e) = handled {
            let _ = tx.rollback().await;
            return Work::Failed(e);
        }
        if self.crash(MID_WORK, job) {
            return Work::Crashed;
        }
        match hold.mark_done(&tx, self.config.clock.now()).await {
            Err(e) => return Work::Failed(e.into()),
            Ok(false) => {
                let _ = tx.rollback().await;
                return Work::Superseded;
            }
            Ok(true) => {}
        }
        if self.crash(AFTER_WORK, job) {
            return Work::Crashed;
        }
        // A failed COMMIT may or may not have landed; releasing then is
        // safe either way (release only deletes a fact still `running`).
        match tx.commit().await {
            Ok(()) => Work::Committed,
            Err(e) => Work::Failed(e.into()),
        }
    }

    /// Every `heartbeat`: extend the message lease (with its receipt) and
    /// push the fact's lease. Runs until the handler ends.
    async fn heartbeat(&self, job: &Job, hold: &Hold<'_>) -> Infallible {
        let every = self.config.heartbeat;
        let mut ticks = tokio::time::interval_at(Instant::now() + every, every);
        ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            self.beat(job, hold).await;
        }
    }

    /// One heartbeat: the message lease (HTTP) and the fact's lease (the
    /// beat link) side by side, each bounded by the heartbeat interval so a
    /// stalled server or database delays the next beat, never stops it.
    async fn beat(&self, job: &Job, hold: &Hold<'_>) {
        let id = &job.message.message_id;
        let bound = self.config.heartbeat;
        let receipt = Some(job.message.receipt.as_str());
        let extend = tokio::time::timeout(
            bound,
            self.client
                .extend(&job.queue, id, receipt, self.config.visibility_timeout),
        );
        let until = self.config.clock.now() + self.fact_lease;
        let push = tokio::time::timeout(bound, async {
            let link = self.beat_link.get().await?;
            hold.heartbeat(&**link, until).await
        });
        let (extended, pushed) = tokio::join!(extend, push);
        let lease_moved = match extended {
            Ok(Ok(e)) if !e.extended => {
                tracing::info!(message_id = %id, fact = %job.fact,
                    "message lease lost; the fact still guards the work");
                false
            }
            Ok(Ok(_)) => true,
            Ok(Err(e)) => {
                tracing::warn!(message_id = %id, error = %e, "heartbeat: extend failed");
                false
            }
            Err(_) => {
                tracing::warn!(message_id = %id, ?bound, "heartbeat: extend timed out");
                false
            }
        };
        let fact_moved = match pushed {
            Ok(Ok(true)) => true,
            Ok(Ok(false)) => {
                tracing::warn!(message_id = %id, fact = %job.fact,
                    "fact taken over by another worker; this attempt will roll back");
                false
            }
            Ok(Err(e)) => {
                tracing::warn!(fact = %job.fact, error = %e, "heartbeat: fact lease not pushed");
                false
            }
            Err(_) => {
                tracing::warn!(fact = %job.fact, ?bound, "heartbeat: fact lease push timed out");
                false
            }
        };
        self.counters.beat(lease_moved && fact_moved);
    }

    /// Checks a fail point; when it fires the job stops right here.
    fn crash(&self, point: &'static str, job: &Job) -> bool {
        let fired = self.config.fail_points.check(point).is_err();
        if fired {
            tracing::warn!(point, message_id = %job.message.message_id, fact = %job.fact, "fail point fired: job abandoned");
        }
        fired
    }
}
