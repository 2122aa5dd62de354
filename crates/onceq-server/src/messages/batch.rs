//! The batch forms of [`Messages`]: many messages of one queue in one store
//! call (one transaction), with the follow-ups of the single forms counted
//! once for the batch: acks counted (and their throughput), removals and
//! moves waking one consumer per message they let go out.

use onceq_store::{MessageAck, MessageIds, RedriveManyOutcome, Result, SingleOutcome};

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
        state.metrics.acked_many(project, queue, &outcomes, now);
        let acked: Vec<bool> = outcomes.iter().map(|o| o.acked).collect();
        let n = acked.iter().filter(|a| **a).count() as u64;
        state.throughput.acked(project, queue, state.clock.now(), n);
        Ok(acked)
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
