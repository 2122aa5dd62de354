//! Batched acks ([`WorkerConfig::batch_acks`](super::WorkerConfig::batch_acks)).
//!
//! A job whose fact is `done` hands its ack in ([`Acks::hand_in`]) and
//! frees its slot; the poll loop's next consume carries the acks waiting
//! ([`Acks::take`], at most a consume's worth), and a flusher sends those no
//! consume took within `ack_linger` in `ack_batch` calls (a long poll that
//! is waiting, `run_once`, shutdown). Each job hears whether its ack ended
//! its lease (its `ack_lost` count). Order of the steps per job is kept:
//! fact `done` and committed, then the ack is sent; a lost batch means a
//! redelivery that finds the fact `done` and is acked without rerunning.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use onceq_types::reply::AckBatchResult;
use tokio::sync::{Notify, oneshot};
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::{BatchAck, Client};

/// An ack handed in, and who waits for its answer.
pub(crate) struct Pending {
    ack: BatchAck,
    reply: oneshot::Sender<bool>,
}

/// The acks waiting to go out.
#[derive(Default)]
pub(crate) struct Acks {
    pending: Mutex<Vec<Pending>>,
    handed_in: Notify,
}

impl Acks {
    /// Hands an ack in; the receiver says whether it ended its lease (false
    /// also when its call failed).
    pub(crate) fn hand_in(&self, ack: BatchAck) -> oneshot::Receiver<bool> {
        let (reply, answer) = oneshot::channel();
        self.lock().push(Pending { ack, reply });
        self.handed_in.notify_one();
        answer
    }

    /// Up to a consume's worth of the acks waiting, oldest first.
    pub(crate) fn take(&self) -> Vec<Pending> {
        let mut pending = self.lock();
        let n = pending.len().min(onceq_types::MAX_BATCH);
        pending.drain(..n).collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Pending>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The acks of `taken`, to send.
pub(crate) fn entries(taken: &[Pending]) -> Vec<BatchAck> {
    taken.iter().map(|p| p.ack.clone()).collect()
}

/// Answers each of `taken` from the call's answer (`None`: the call failed,
/// none is known to have ended its lease).
pub(crate) fn settle(taken: Vec<Pending>, answer: Option<&AckBatchResult>) {
    for p in taken {
        let acked = answer.is_some_and(|a| {
            a.successful
                .iter()
                .any(|s| s.message_id == p.ack.message_id)
        });
        if !acked {
            tracing::info!(message_id = %p.ack.message_id,
                "ack refused or lost; the next holder finds the fact done");
        }
        // A job that went away does not need its answer.
        let _ = p.reply.send(acked);
    }
}

/// Starts the flusher of `acks` (see the module docs); it sends what is
/// left and stops when the guard is dropped.
pub(crate) fn flusher(
    acks: Arc<Acks>,
    client: Client,
    queue: String,
    linger: Duration,
) -> DropGuard {
    let stop = CancellationToken::new();
    let stopped = stop.clone();
    tokio::spawn(async move {
        loop {
            let last = tokio::select! {
                () = stopped.cancelled() => true,
                () = acks.handed_in.notified() => false,
            };
            if !last {
                tokio::select! {
                    () = stopped.cancelled() => {}
                    () = tokio::time::sleep(linger) => {}
                }
            }
            flush(&acks, &client, &queue).await;
            if last || stopped.is_cancelled() {
                return;
            }
        }
    });
    stop.drop_guard()
}

/// Sends every ack waiting, a consume's worth per `ack_batch`.
pub(crate) async fn flush(acks: &Acks, client: &Client, queue: &str) {
    loop {
        let taken = acks.take();
        if taken.is_empty() {
            return;
        }
        match client.ack_batch(queue, entries(&taken)).await {
            Ok(answer) => settle(taken, Some(&answer)),
            Err(e) => {
                tracing::warn!(error = %e, acks = taken.len(),
                    "ack_batch failed; those messages come back as duplicates");
                settle(taken, None);
            }
        }
    }
}
