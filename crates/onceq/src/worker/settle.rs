//! How a job ends towards the queue and the facts table: ack a duplicate,
//! defer to a live holder, release and nack a failure.

use std::{fmt::Display, time::Duration};

use jiff::SignedDuration;
use onceq_types::MAX_DELAY_SECONDS;
use onceq_types::attempt::MAX_NACK_ERROR_BYTES;

use super::{
    Job,
    fact::Hold,
    metrics::{Outcome, Settled},
    runner::Inner,
};
use crate::{BatchAck, NackOptions};

/// An ack of done work: answered (`Sent`), or to be answered with its
/// batch (`HandedIn`).
pub(super) enum Acking {
    Sent(bool),
    HandedIn(tokio::sync::oneshot::Receiver<bool>),
}

impl Acking {
    /// The job's ending, `outcome` given whether the ack was lost.
    pub(super) fn settled(self, outcome: impl Fn(bool) -> Outcome) -> Settled {
        match self {
            Acking::Sent(acked) => outcome(!acked).into(),
            Acking::HandedIn(ack) => Settled {
                outcome: outcome(false),
                ack: Some(ack),
            },
        }
    }
}

impl Inner {
    /// The work is done already: ack without doing it again.
    pub(super) async fn duplicate(&self, job: &Job) -> Settled {
        tracing::debug!(message_id = %job.message.message_id, fact = %job.fact, "duplicate of done work");
        let acked = self.ack_done(job).await;
        acked.settled(|ack_lost| Outcome::Duplicate { ack_lost })
    }

    /// The ack of a job whose fact is done: sent now, or handed in to go
    /// in a batch ([`WorkerConfig::batch_acks`](super::WorkerConfig::batch_acks)).
    pub(super) async fn ack_done(&self, job: &Job) -> Acking {
        if !self.config.batch_acks {
            return Acking::Sent(self.ack(job).await);
        }
        let m = &job.message;
        Acking::HandedIn(self.acks.hand_in(BatchAck {
            message_id: m.message_id.clone(),
            receipt: m.receipt.clone(),
            result: job.result(),
        }))
    }

    /// A live attempt holds the fact: not ours to ack. Hand the message back
    /// until about when that attempt's lease would run out.
    pub(super) async fn defer(&self, job: &Job, left: SignedDuration) -> Outcome {
        let secs = left.as_secs() + i64::from(left.subsec_nanos() > 0);
        tracing::debug!(message_id = %job.message.message_id, fact = %job.fact, secs, "fact held by a live worker; deferred");
        // Not a failure of the work: no error text.
        let dead_lettered = self.nack(job, secs.clamp(1, MAX_DELAY_SECONDS), None).await;
        Outcome::Deferred { dead_lettered }
    }

    /// Rolls back (done by the caller), releases the fact, nacks with backoff.
    pub(super) async fn fail(
        &self,
        job: &Job,
        held: Option<(&tokio_postgres::Client, &Hold<'_>)>,
        err: &(dyn Display + Sync),
    ) -> Outcome {
        tracing::warn!(message_id = %job.message.message_id, fact = %job.fact,
            delivery_count = job.message.delivery_count, error = %err, "job failed");
        if let Some((db, hold)) = held {
            self.release(db, hold).await;
        }
        let attempt = u32::try_from(job.message.delivery_count).unwrap_or(1);
        let delay = ceil_secs(self.config.retry.delay(attempt));
        Outcome::Failed {
            dead_lettered: self.nack(job, delay, Some(error_text(err))).await,
        }
    }

    pub(super) async fn release(&self, db: &tokio_postgres::Client, hold: &Hold<'_>) {
        if let Err(e) = hold.release(db).await {
            tracing::warn!(fact = %hold.fact, error = %e, "fact not released; it is taken over when its lease ends");
        }
    }

    /// Acks with the receipt; false when the lease was lost or the call failed.
    pub(super) async fn ack(&self, job: &Job) -> bool {
        let m = &job.message;
        match self
            .client
            .ack_with_result(&job.queue, &m.message_id, Some(&m.receipt), job.result())
            .await
        {
            Ok(true) => true,
            Ok(false) => {
                tracing::info!(message_id = %m.message_id, fact = %job.fact,
                    "ack refused (lease lost); the next holder finds the fact done");
                false
            }
            Err(e) => {
                tracing::warn!(message_id = %m.message_id, error = %e, "ack failed; the message comes back as a duplicate");
                false
            }
        }
    }

    /// Nacks with the receipt (and why, if the work failed); true when the
    /// server dead-lettered it.
    pub(super) async fn nack(&self, job: &Job, delay_seconds: i64, error: Option<String>) -> bool {
        let m = &job.message;
        let opts = NackOptions {
            receipt: Some(m.receipt.clone()),
            requeue: true,
            delay_seconds: Some(delay_seconds),
            error,
        };
        match self.client.nack(&job.queue, &m.message_id, opts).await {
            Ok(n) if n.dead_lettered => {
                tracing::warn!(message_id = %m.message_id, fact = %job.fact,
                    delivery_count = n.delivery_count, "message dead-lettered");
                true
            }
            Ok(_) => false,
            Err(e) => {
                tracing::warn!(message_id = %m.message_id, error = %e, "nack failed; the lease will expire instead");
                false
            }
        }
    }
}

/// A failure's text as a nack may carry it: at most
/// [`MAX_NACK_ERROR_BYTES`] bytes, cut at a character boundary.
fn error_text(err: &(dyn Display + Sync)) -> String {
    let mut text = err.to_string();
    if text.len() > MAX_NACK_ERROR_BYTES {
        let mut end = MAX_NACK_ERROR_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

fn ceil_secs(d: Duration) -> i64 {
    let secs = d.as_secs() + u64::from(d.subsec_nanos() > 0);
    i64::try_from(secs)
        .unwrap_or(MAX_DELAY_SECONDS)
        .min(MAX_DELAY_SECONDS)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_long_error_is_cut_at_a_character_boundary() {
        let long = "é".repeat(super::MAX_NACK_ERROR_BYTES);
        let text = super::error_text(&long);
        assert!(
            text.len() <= super::MAX_NACK_ERROR_BYTES
                && text.len() >= super::MAX_NACK_ERROR_BYTES - 1
        );
        assert_eq!(super::error_text(&"short"), "short");
    }
}
