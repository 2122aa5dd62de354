//! Dedupe planning: how each message of one publish resolves against its
//! idempotency key. What needs no database is decided here, once, for all
//! three publish paths (PostgreSQL's group commit and publish alone, and
//! SQLite's): a keyless message is new; the first message of each key is
//! new unless the store holds the key; a key repeated within the publish is
//! answered as its first message, or fails the publish when the payload
//! differs. A key the store holds makes its message a replay of the key's
//! first message ([`Plan::held`]), or fails the publish likewise.

use std::collections::HashMap;

use jiff::Timestamp;
use onceq_types::MessageStatus;

use crate::{HandedOut, NewMessage, PublishOutcome, Result, StoreError};

/// How one message of a publish resolves.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Plan {
    /// Store it; its key, if any, is to be taken (the first of that key in
    /// the publish).
    New,
    /// Answered from the key's first message, which the store holds.
    Replay(PublishOutcome),
    /// Same key and payload as the earlier message at this index: answered
    /// as that one.
    SameAs(usize),
    /// Same key as an earlier message, another payload: fails the publish.
    Reused,
}

/// Appends a plan for each of `messages` (`hashes` their payload hashes) to
/// `plans`, and calls `take` with the index of each message whose key is to
/// be taken, in order. Returns the index of the first message that reuses a
/// key with another payload, if one does. Appending to the caller's vector
/// keeps the group commit's allocations as they were.
pub(crate) fn plan(
    messages: &[NewMessage],
    hashes: &[[u8; 32]],
    plans: &mut Vec<Plan>,
    mut take: impl FnMut(usize),
) -> Option<usize> {
    let mut first_of: HashMap<&str, usize> = HashMap::new();
    let mut reused = None;
    for (i, m) in messages.iter().enumerate() {
        let Some(key) = m.idempotency_key.as_deref() else {
            plans.push(Plan::New);
            continue;
        };
        if let Some(&first) = first_of.get(key) {
            if hashes[first] == hashes[i] {
                plans.push(Plan::SameAs(first));
            } else {
                reused.get_or_insert(i);
                plans.push(Plan::Reused);
            }
            continue;
        }
        first_of.insert(key, i);
        plans.push(Plan::New);
        take(i);
    }
    reused
}

impl Plan {
    /// The plan of a message whose key the store holds for a first message
    /// with payload hash `first_hash`: a replay of it (`replay` makes the
    /// answer), or `Reused` when this message's `hash` differs.
    pub(crate) fn held(
        first_hash: &[u8],
        hash: &[u8],
        replay: impl FnOnce() -> Result<PublishOutcome>,
    ) -> Result<Plan> {
        if first_hash != hash {
            return Ok(Plan::Reused);
        }
        Ok(Plan::Replay(replay()?))
    }
}

/// `IdempotencyKeyReused` for message `index` of `messages`.
pub(crate) fn reused(messages: &[NewMessage], index: usize) -> StoreError {
    StoreError::IdempotencyKeyReused {
        index,
        key: messages[index].idempotency_key.clone().unwrap_or_default(),
    }
}

/// The answer to a new message, as published: `available` (or `delayed`),
/// delivery count 0, even when it was stored handed out under
/// `handed_out`'s lease ([`crate::HandOut`]), as a claim a moment later
/// would leave it: the contract's publish answer (queue-api.md §publish).
pub(crate) fn new_outcome(
    message_id: String,
    payload: String,
    status: MessageStatus,
    created_at: Timestamp,
    handed_out: Option<HandedOut>,
) -> PublishOutcome {
    PublishOutcome {
        message_id,
        payload,
        status: match handed_out {
            Some(_) => MessageStatus::Available,
            None => status,
        },
        delivery_count: 0,
        created_at,
        replay: false,
        handed_out,
    }
}

/// The answers to a publish planned as `plans`, in order: `new` answers
/// (and, on SQLite, stores) each message planned new; the first `Reused`
/// fails the whole publish.
pub(crate) fn outcomes<E: From<StoreError>>(
    messages: &[NewMessage],
    plans: Vec<Plan>,
    mut new: impl FnMut(usize) -> std::result::Result<PublishOutcome, E>,
) -> std::result::Result<Vec<PublishOutcome>, E> {
    let mut outcomes: Vec<PublishOutcome> = Vec::with_capacity(plans.len());
    for (i, plan) in plans.into_iter().enumerate() {
        outcomes.push(match plan {
            Plan::New => new(i)?,
            Plan::Replay(outcome) => outcome,
            // The first one's message, handed out (if it was) with the
            // first one's answer only.
            Plan::SameAs(first) => PublishOutcome {
                payload: messages[i].payload.clone(),
                replay: true,
                handed_out: None,
                ..outcomes[first].clone()
            },
            Plan::Reused => return Err(reused(messages, i).into()),
        });
    }
    Ok(outcomes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(payload: &str, key: Option<&str>) -> NewMessage {
        NewMessage {
            payload: payload.into(),
            delay: jiff::SignedDuration::ZERO,
            priority: 0,
            idempotency_key: key.map(Into::into),
            group_id: None,
            headers: None,
            hand_out: None,
        }
    }

    fn planned(messages: &[NewMessage]) -> (Vec<Plan>, Vec<usize>, Option<usize>) {
        let hashes: Vec<[u8; 32]> = messages
            .iter()
            .map(|m| crate::ids::payload_hash(&m.payload))
            .collect();
        let (mut plans, mut takes) = (Vec::new(), Vec::new());
        let reused = plan(messages, &hashes, &mut plans, |i| takes.push(i));
        (plans, takes, reused)
    }

    fn outcome(id: &str, payload: &str) -> PublishOutcome {
        new_outcome(
            id.into(),
            payload.into(),
            MessageStatus::Available,
            Timestamp::UNIX_EPOCH,
            None,
        )
    }

    #[test]
    fn keyless_messages_are_new_and_take_nothing() {
        let (plans, takes, reused) = planned(&[message("1", None), message("1", None)]);
        assert_eq!(plans, [Plan::New, Plan::New]);
        assert!(takes.is_empty());
        assert_eq!(reused, None);
    }

    #[test]
    fn a_repeated_key_is_answered_as_its_first_message() {
        let messages = [
            message("1", Some("a")),
            message("2", Some("b")),
            message("1", Some("a")),
        ];
        let (plans, takes, reused) = planned(&messages);
        assert_eq!(plans, [Plan::New, Plan::New, Plan::SameAs(0)]);
        assert_eq!(takes, [0, 1]);
        assert_eq!(reused, None);
        let answers = outcomes::<StoreError>(&messages, plans, |i| {
            Ok(outcome(&format!("m{i}"), &messages[i].payload))
        })
        .unwrap();
        assert_eq!(answers[2].message_id, "m0");
        assert!(answers[2].replay && !answers[0].replay);
    }

    #[test]
    fn a_key_reused_with_another_payload_fails_at_its_first_reuse() {
        let messages = [
            message("1", Some("a")),
            message("2", None),
            message("3", Some("a")),
            message("4", Some("a")),
        ];
        let (plans, takes, reused) = planned(&messages);
        assert_eq!(plans[2..], [Plan::Reused, Plan::Reused]);
        assert_eq!((takes, reused), (vec![0], Some(2)));
        let err =
            outcomes::<StoreError>(&messages, plans, |i| Ok(outcome("m", &messages[i].payload)))
                .unwrap_err();
        assert!(matches!(err, StoreError::IdempotencyKeyReused { index: 2, key } if key == "a"));
    }

    #[test]
    fn a_held_key_replays_only_the_same_payload() {
        let (a, b) = (crate::ids::payload_hash("1"), crate::ids::payload_hash("2"));
        let replay = || Ok(outcome("first", "1"));
        assert!(
            matches!(Plan::held(&a, &a, replay).unwrap(), Plan::Replay(o) if o.message_id == "first")
        );
        let not_asked = || -> Result<PublishOutcome> { panic!("no replay for another payload") };
        assert_eq!(Plan::held(&a, &b, not_asked).unwrap(), Plan::Reused);
    }
}
