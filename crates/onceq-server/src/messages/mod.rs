//! [`Messages`]: the one way the server reaches messages. Each operation is
//! one store call followed by its follow-ups, in one place: the `/metrics`
//! counters, the dashboard's throughput, account webhook events, and the
//! wake-ups of long-polling consumers and push dispatchers. The routes,
//! push delivery, cron, the dashboard, the lease reaper and the purger all
//! go through it, so an operation counts and wakes the same whoever makes
//! it; `boundary` checks that no other module calls the store's message
//! operations.
//!
//! - this file: publish, claim, ack, nack, redrive, cancel, promote, lease
//!   expiry, pause;
//! - `batch`: the batch forms (ack, cancel, delete, redrive by ids), one
//!   store call each;
//! - `wait`: the long-poll wait (`claim_waiting`), written once;
//! - `hand_out`: a publish's messages handed straight to waiting
//!   consumers;
//! - `reads`: pages, search, one message, finished ones, extend, delete,
//!   purges.
//!
//! A borrowed view of the [`AppState`] (`state.messages()`), so using it
//! costs no clone, allocation, lock or await beyond the store call's own.
//! Errors are the store's: each caller words them for its audience (API
//! envelope, dashboard page, push log line).
//!
//! The queue a follow-up is counted on is passed by reference (`project`
//! and `queue`, or the publish's [`QueueRef`]) beside the store's
//! parameters, which own their copy of it: callers already hold those
//! names, so no operation copies them once more than before.

use jiff::SignedDuration;
use onceq_store::{
    ClaimedMessage, DlqRedrive, DlqRedriveOne, LeaseExpiry, LeaseRef, MessageAck, MessageCancel,
    MessageClaim, MessageNack, MessagePromote, MessagePublish, NackOutcome, NewMessage,
    PromoteOutcome, PublishOutcome, QueuePause, QueueRef, RedriveOneOutcome, RedriveOutcome,
    Result, SingleOutcome, StoreError,
};
use onceq_types::{MessageStatus, QueueRecord};

use crate::{
    AppState,
    webhooks::{self, Event},
};

mod batch;
#[cfg(test)]
mod boundary;
mod hand_out;
mod reads;
mod wait;

/// Message operations over the state's store (see the module doc).
#[derive(Clone, Copy)]
pub struct Messages<'a> {
    state: &'a AppState,
}

impl AppState {
    /// The message operations, with their follow-ups.
    pub fn messages(&self) -> Messages<'_> {
        Messages { state: self }
    }
}

impl Messages<'_> {
    /// Stores `messages` on `queue`: counts them (fresh and replayed),
    /// hands those it can straight to consumers waiting here (the queue's
    /// offers, `wakeup`), and wakes one waiting consumer per other message
    /// stored available.
    pub async fn publish(
        self,
        queue: &QueueRef,
        mut messages: Vec<NewMessage>,
        dedupe_window: SignedDuration,
    ) -> Result<Vec<PublishOutcome>> {
        let state = self.state;
        let (project, name) = (&queue.project, &queue.queue);
        let offers = hand_out::assign(state, queue, &mut messages);
        let publish = MessagePublish {
            queue: queue.clone(),
            messages,
            dedupe_window,
            new_queue_completed_retention: state.config.completed_retention_seconds,
            now: state.clock.now(),
        };
        let (outcomes, unused) = match offers.is_empty() {
            true => (state.store().message_publish(publish).await?, 0),
            // Run to the end even if this caller goes away halfway (its
            // client disconnected): messages it may have stored handed
            // out reach their consumers, or are handed back, either way.
            false => {
                let (state, queue) = (state.clone(), queue.clone());
                tokio::spawn(async move {
                    let mut offers = offers;
                    let carried = offers.carried_acks();
                    let (published, acked) = match carried.is_empty() {
                        true => (state.store().message_publish(publish).await, None),
                        false => {
                            let done = state.store().message_publish_acking(publish, carried).await;
                            (done.published, done.acked)
                        }
                    };
                    offers.settle_acks(state.messages(), &queue, acked).await;
                    // Offers left without a message wake their consumer
                    // (dropped, or sent no message).
                    let outcomes = published.as_deref().unwrap_or_default();
                    let (unused, unsent) = offers.deliver(state.messages(), &queue, outcomes);
                    hand_out::hand_back_now(&state, &queue, unsent).await;
                    Ok::<_, StoreError>((published?, unused))
                })
                .await
                .map_err(StoreError::internal)??
            }
        };
        state.metrics.published(project, name, &outcomes);
        let available = outcomes
            .iter()
            .filter(|o| !o.replay && o.handed_out.is_none())
            .filter(|o| o.status == MessageStatus::Available)
            .count();
        self.wake(project, name, available.saturating_sub(unused));
        state.throughput.published(
            project,
            name,
            state.clock.now(),
            outcomes.iter().filter(|o| !o.replay).count() as u64,
        );
        Ok(outcomes)
    }

    /// Returns a message handed out at publish whose consumer went away
    /// before reading it ([`onceq_store::Store::message_hand_back`]), and
    /// wakes a consumer for it.
    pub async fn hand_back(self, lease: LeaseRef) -> Result<bool> {
        let (project, queue) = (lease.queue.project.clone(), lease.queue.queue.clone());
        let back = self.state.store().message_hand_back(lease).await?;
        self.wake(&project, &queue, usize::from(back));
        Ok(back)
    }

    /// Claims messages (a consume, or a push subscription's claim) and
    /// counts those handed out.
    pub async fn claim(
        self,
        project: &str,
        queue: &str,
        claim: MessageClaim,
    ) -> Result<Vec<ClaimedMessage>> {
        let now = claim.now;
        let claimed = self.state.store().message_claim(claim).await?;
        self.state.metrics.consumed(project, queue, &claimed, now);
        Ok(claimed)
    }

    /// Acks a lease; counts it (and its throughput) if it was held.
    pub async fn ack(self, project: &str, queue: &str, ack: MessageAck) -> Result<bool> {
        let state = self.state;
        let now = ack.now;
        let outcome = state.store().message_ack(ack).await?;
        state.metrics.acked(project, queue, outcome, now);
        let acked = outcome.acked;
        state
            .throughput
            .acked(project, queue, state.clock.now(), u64::from(acked));
        Ok(acked)
    }

    /// Nacks a lease; counts it (and its failure in the throughput), and wakes a consumer when the message is
    /// available again at once (requeued without a delay).
    pub async fn nack(self, project: &str, queue: &str, nack: MessageNack) -> Result<NackOutcome> {
        let state = self.state;
        let at_once = nack.delay.is_zero();
        // Kept only when someone listens: a nack costs nothing more otherwise.
        let message_id = (state.events.listeners)
            .wants(project, webhooks::event::DEAD_LETTERED)
            .then(|| nack.lease.message_id.clone());
        let with_error = nack.error.is_some();
        let outcome = state.store().message_nack(nack).await?;
        state.metrics.nacked(project, queue, &outcome, with_error);
        if outcome.nacked {
            state.throughput.failed(
                project,
                queue,
                state.clock.now(),
                1,
                u64::from(outcome.dead_lettered),
            );
        }
        self.wake(project, queue, usize::from(outcome.requeued && at_once));
        if outcome.dead_lettered && message_id.is_some() {
            let event = Event::DeadLettered {
                queue: queue.to_owned(),
                reason: "nack",
                message_id,
                delivery_count: Some(outcome.delivery_count),
                count: 1,
            };
            state.emit(project, event).await;
        }
        Ok(outcome)
    }

    /// Moves dead letters back into their queue and wakes one consumer per
    /// message moved.
    pub async fn redrive(
        self,
        project: &str,
        queue: &str,
        redrive: DlqRedrive,
    ) -> Result<RedriveOutcome> {
        let outcome = self.state.store().dlq_redrive(redrive).await?;
        self.wake(
            project,
            queue,
            usize::try_from(outcome.redriven).unwrap_or(0),
        );
        Ok(outcome)
    }

    /// Moves one dead letter back into its queue and wakes a consumer if it
    /// moved.
    pub async fn redrive_one(
        self,
        project: &str,
        queue: &str,
        redrive: DlqRedriveOne,
    ) -> Result<RedriveOneOutcome> {
        let outcome = self.state.store().dlq_redrive_one(redrive).await?;
        let moved = outcome.outcome == SingleOutcome::Done;
        self.wake(project, queue, usize::from(moved));
        Ok(outcome)
    }

    /// Removes one message of the queue, waiting, delayed or in flight
    /// (`POST /v1/queue/cancel` and the dashboard's "Cancel"). When it
    /// was removed, wakes one waiting consumer: a cancelled FIFO head lets
    /// its group's next message be handed out (elsewhere the consumer
    /// finds nothing new and waits again).
    pub async fn cancel(self, project: &str, queue: &str, cancel: MessageCancel) -> Result<bool> {
        let cancelled = self.state.store().message_cancel(cancel).await?;
        self.wake(project, queue, usize::from(cancelled));
        Ok(cancelled)
    }

    /// Makes a delayed message available now (the dashboard's "Promote")
    /// and wakes a consumer if it was.
    pub async fn promote_now(
        self,
        project: &str,
        queue: &str,
        promote: MessagePromote,
    ) -> Result<PromoteOutcome> {
        let outcome = self.state.store().message_promote_now(promote).await?;
        self.wake(
            project,
            queue,
            usize::from(outcome == PromoteOutcome::Promoted),
        );
        Ok(outcome)
    }

    /// Ends up to `limit` expired leases (the lease reaper): counts them
    /// per queue and wakes, on each queue, one waiting consumer per message
    /// returned to it, so a long poll gets it without waiting for its
    /// periodic re-check. (Messages dead-lettered by expiry wake no one:
    /// the store does not say which DLQ they went to; consumers of a DLQ
    /// find them at their re-check.)
    pub async fn expire_leases(self, limit: u32) -> Result<LeaseExpiry> {
        let state = self.state;
        let done = state.store().lease_expire(state.clock.now(), limit).await?;
        state.metrics.leases_expired(&done);
        let now = state.clock.now();
        for q in &done.by_queue {
            let (project, name) = (&q.queue.project, &q.queue.queue);
            let failed = q.requeued + q.dead_lettered;
            state
                .throughput
                .failed(project, name, now, failed, q.dead_lettered);
            let requeued = usize::try_from(q.requeued).unwrap_or(usize::MAX);
            self.wake(&q.queue.project, &q.queue.queue, requeued);
            lease_events(state, q).await;
        }
        Ok(done)
    }

    /// Pauses or resumes a queue; a resume wakes every consumer and push
    /// dispatcher waiting on it here (other servers' long polls see it at
    /// their next re-check, as they see work published elsewhere).
    pub async fn pause(self, project: &str, queue: &str, pause: QueuePause) -> Result<QueueRecord> {
        let record = self.state.store().queue_pause(pause).await?;
        if !record.paused {
            self.state.wakeups.wake_all(project, queue);
        }
        let queue = queue.to_owned();
        let event = if record.paused {
            Event::QueuePaused { queue }
        } else {
            Event::QueueResumed { queue }
        };
        self.state.emit(project, event).await;
        Ok(record)
    }

    /// `available` messages became available on the queue: wakes that many
    /// waiting consumers at most (and its push dispatchers). Nothing at all
    /// for none, not even the wake-up map's lock.
    fn wake(self, project: &str, queue: &str, available: usize) {
        if available > 0 {
            self.state.wakeups.wake(project, queue, available);
        }
    }
}

/// `message.failed` for a queue's expired leases, and `message.dead_lettered`
/// for those that were their message's last hand-out: one event of each per
/// queue and pass, with the count (the reaper does not see message ids).
async fn lease_events(state: &AppState, q: &onceq_store::QueueLeaseExpiry) {
    let (project, queue) = (&q.queue.project, &q.queue.queue);
    let failed = Event::Failed {
        queue: queue.clone(),
        reason: "lease_expired",
        message_id: None,
        delivery_count: None,
        error: None,
        subscription_id: None,
        count: q.requeued + q.dead_lettered,
    };
    state.emit(project, failed).await;
    if q.dead_lettered > 0 {
        let dead = Event::DeadLettered {
            queue: queue.clone(),
            reason: "lease_expired",
            message_id: None,
            delivery_count: None,
            count: q.dead_lettered,
        };
        state.emit(project, dead).await;
    }
}
