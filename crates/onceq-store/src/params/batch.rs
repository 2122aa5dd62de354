//! The batch forms: one call, one transaction, many messages, answered
//! entry by entry in the order given. Acks and nacks take their single
//! form's params (`MessageAck`, `MessageNack`) as entries; cancel, delete
//! and redrive by ids name one queue and its messages ([`MessageIds`]).

use jiff::Timestamp;

use super::{QueueRef, SingleOutcome};

/// The most entries one batch call takes (callers bound theirs lower: the
/// API by the consume limit, the dashboard by a page).
pub const MAX_BATCH: usize = 512;

/// `message_cancel_many`, `message_delete_many`, `dlq_redrive_many`:
/// messages of one queue named by id.
#[derive(Debug, Clone)]
pub struct MessageIds {
    /// Which queue (for a redrive: the source queue, whose dead-letter
    /// queue holds the messages).
    pub queue: QueueRef,
    /// The messages, 1..=[`MAX_BATCH`]. An id named twice is done once:
    /// its first entry answers `Done`, the later ones `NotFound`.
    pub message_ids: Vec<String>,
    /// The time of the call.
    pub now: Timestamp,
}

/// What `dlq_redrive_many` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedriveManyOutcome {
    /// The DLQ's name.
    pub dead_letter_queue: String,
    /// One per id given, in order: `Done` when it moved back, `InFlight`
    /// when a consumer of the DLQ holds it, `NotFound` when the DLQ does
    /// not hold it.
    pub outcomes: Vec<SingleOutcome>,
}

impl MessageIds {
    /// Checks the batch's size (what both backends refuse alike).
    pub(crate) fn checked(&self) -> crate::Result<()> {
        crate::params::check_batch(self.message_ids.len())
    }

    /// The outcomes of the ids, in order, from the set of ids acted on
    /// (`done`) and the set left alone because in flight (`held`); an id
    /// named twice is done by its first entry only.
    pub(crate) fn outcomes<'a>(
        &'a self,
        done: impl IntoIterator<Item = &'a str>,
        held: impl IntoIterator<Item = &'a str>,
    ) -> Vec<SingleOutcome> {
        let mut done: std::collections::HashSet<&str> = done.into_iter().collect();
        let held: std::collections::HashSet<&str> = held.into_iter().collect();
        self.message_ids
            .iter()
            .map(|id| {
                if done.remove(id.as_str()) {
                    SingleOutcome::Done
                } else if held.contains(id.as_str()) {
                    SingleOutcome::InFlight
                } else {
                    SingleOutcome::NotFound
                }
            })
            .collect()
    }
}

/// `Store::message_ack_many_then_claim`'s acks: a batch (see
/// [`check_batch`]) of the claim's queue. So a claim that finds no queue
/// (`QueueNotFound`) had acks that found nothing to do either, and one
/// transaction holds the rest: a failure undoes both.
pub(crate) fn check_acks_of_claim(
    acks: &[crate::MessageAck],
    claim: &crate::MessageClaim,
) -> crate::Result<()> {
    check_batch(acks.len())?;
    if acks.iter().any(|a| a.lease.queue != claim.queue) {
        return Err(crate::StoreError::Invalid(
            "the acks of a consume are of the queue it claims from".into(),
        ));
    }
    Ok(())
}

/// `Invalid` for a batch of no entries or more than [`MAX_BATCH`].
pub(crate) fn check_batch(len: usize) -> crate::Result<()> {
    if len == 0 || len > MAX_BATCH {
        return Err(crate::StoreError::Invalid(format!(
            "a batch holds 1 to {MAX_BATCH} entries (got {len})"
        )));
    }
    Ok(())
}
