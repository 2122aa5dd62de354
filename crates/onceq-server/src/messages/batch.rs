//! The batch forms of [`Messages`]: many messages of one queue in one store
//! call (one transaction), with the follow-ups of the single forms counted
//! once for the batch: acks counted (and their throughput), removals and
//! moves waking one consumer per message they let go out.

use jiff::Timestamp;
use onceq_store::{
    AckOutcome, ClaimedMessage, MessageAck, MessageClaim, MessageIds, RedriveManyOutcome, Result,
    SingleOutcome,
};

use super::Messages;

impl Messages<'_> {
    /// Acks a batch (`ack_batch`, `consume`'s `acks`): whether each ended
    /// its lease, in order; counted as each single ack is.
    pub async fn ack_many(
        self,
        project: &str,
        queue: &str,
        acks: Vec<MessageAck>,
    ) -> Result<Vec<bool>> {
        let state = self.state;
        let Some(now) = acks.first().map(|a| a.now) else {
            return Ok(Vec::new());
        };
        let outcomes = state.store().message_ack_many(acks).await?;
        self.count_acks(project, queue, &outcomes, now);
        Ok(outcomes.iter().map(|o| o.acked).collect())
    }

    /// Acks a batch (`consume`'s `acks`) and claims, in one store call and
    /// transaction; counted as [`Messages::ack_many`] and
    /// [`Messages::claim`] count theirs.
    pub async fn ack_many_then_claim(
        self,
        project: &str,
        queue: &str,
        acks: Vec<MessageAck>,
        claim: MessageClaim,
    ) -> Result<(Vec<bool>, Vec<ClaimedMessage>)> {
        let state = self.state;
        let (acked_at, claimed_at) = (acks.first().map(|a| a.now), claim.now);
        let (outcomes, claimed) = state
            .store()
            .message_ack_many_then_claim(acks, claim)
            .await?;
        if let Some(now) = acked_at {
            self.count_acks(project, queue, &outcomes, now);
        }
        state.metrics.consumed(project, queue, &claimed, claimed_at);
        Ok((outcomes.iter().map(|o| o.acked).collect(), claimed))
    }

    /// An ack batch's metrics and throughput.
    pub(super) fn count_acks(
        self,
        project: &str,
        queue: &str,
        outcomes: &[AckOutcome],
        now: Timestamp,
    ) {
        let state = self.state;
        state.metrics.acked_many(project, queue, outcomes, now);
        let n = outcomes.iter().filter(|o| o.acked).count() as u64;
        state.throughput.acked(project, queue, state.clock.now(), n);
    }

    /// Removes the named messages, whatever their state (the dashboard's
    /// bulk "Cancel"), and wakes a consumer per message removed (see
    /// [`Messages::cancel`]).
    pub async fn cancel_many(
        self,
        project: &str,
        queue: &str,
        ids: MessageIds,
    ) -> Result<Vec<SingleOutcome>> {
        let outcomes = self.state.store().message_cancel_many(ids).await?;
        self.wake(project, queue, done(&outcomes));
        Ok(outcomes)
    }

    /// Deletes the named messages but those in flight (the dashboard's bulk
    /// "Delete", of a queue or of its dead letters); a deleted FIFO head
    /// lets its group go on, so a consumer is woken per message deleted.
    pub async fn delete_many(
        self,
        project: &str,
        queue: &str,
        ids: MessageIds,
    ) -> Result<Vec<SingleOutcome>> {
        let outcomes = self.state.store().message_delete_many(ids).await?;
        self.wake(project, queue, done(&outcomes));
        Ok(outcomes)
    }

    /// Moves the named dead letters back into `queue` (`dlq/redrive` with
    /// `message_ids`, the dashboard's bulk "Redrive") and wakes a consumer
    /// per message moved.
    pub async fn redrive_many(
        self,
        project: &str,
        queue: &str,
        ids: MessageIds,
    ) -> Result<RedriveManyOutcome> {
        let outcome = self.state.store().dlq_redrive_many(ids).await?;
        self.wake(project, queue, done(&outcome.outcomes));
        Ok(outcome)
    }
}

fn done(outcomes: &[SingleOutcome]) -> usize {
    outcomes
        .iter()
        .filter(|o| **o == SingleOutcome::Done)
        .count()
}
