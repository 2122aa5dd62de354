//! A message's history: the attempts kept on its row (`attempts`, a JSON
//! array of `onceq_types::Attempt`, oldest first, at most
//! [`MAX_ATTEMPTS_KEPT`]) and how each failed hand-out is written down.
//!
//! PostgreSQL's `onceq_attempts_append` (migration V10) is [`append`] in
//! SQL, for statements that end many leases at once without reading them
//! first (`lease_expire.sql`); `lease_expire.sql` also spells
//! [`lease_expired_error`]'s text. A kept finished message's last attempt
//! is appended when it is read ([`crate::rules::finished::closing_attempt`]). The conformance suite
//! (`tests/it/attempts.rs`) holds both backends to these.

use jiff::Timestamp;
use onceq_types::attempt::MAX_ATTEMPTS_KEPT;
use onceq_types::{Attempt, AttemptOutcome};

use super::dead_letter::Ending;
use crate::{NackBy, StoreError};

/// The stored history, parsed (`None`: no attempt ended yet).
pub(crate) fn parse(stored: Option<&str>) -> crate::Result<Vec<Attempt>> {
    match stored {
        None => Ok(Vec::new()),
        Some(json) => serde_json::from_str(json).map_err(StoreError::internal),
    }
}

/// The stored history, parsed, with `last` appended when given, the
/// oldest dropped beyond [`MAX_ATTEMPTS_KEPT`].
pub(crate) fn parse_then(
    stored: Option<&str>,
    last: Option<Attempt>,
) -> crate::Result<Vec<Attempt>> {
    let mut all = parse(stored)?;
    if let Some(attempt) = last {
        all.push(attempt);
        let drop = all.len().saturating_sub(MAX_ATTEMPTS_KEPT);
        all.drain(..drop);
    }
    Ok(all)
}

/// `stored` with `attempt` appended, the oldest dropped beyond
/// [`MAX_ATTEMPTS_KEPT`].
pub(crate) fn append(stored: Option<&str>, attempt: Attempt) -> crate::Result<String> {
    serde_json::to_string(&parse_then(stored, Some(attempt))?).map_err(StoreError::internal)
}

/// The error text of a lease that ran out: how long it had run.
pub(crate) fn lease_expired_error(consumed_at: Option<Timestamp>, expired_at: Timestamp) -> String {
    match consumed_at {
        Some(at) => format!(
            "lease expired after {} s without ack or extend",
            expired_at.as_second().saturating_sub(at.as_second()).max(0)
        ),
        None => "lease expired without ack or extend".to_owned(),
    }
}

/// The outcome recorded for a failed hand-out that ended as `ending`: the
/// failure that dead-letters is recorded once, as `dead_lettered`, with
/// the failure's own error text (docs/state-machines.md).
pub(crate) fn failure_outcome(ending: Ending, failure: AttemptOutcome) -> AttemptOutcome {
    match ending {
        Ending::DeadLettered => AttemptOutcome::DeadLettered,
        Ending::Requeued | Ending::Dropped => failure,
    }
}

/// The failure a nack by `by` records before the dead-letter rule applies.
pub(crate) fn nack_outcome(by: NackBy) -> AttemptOutcome {
    match by {
        NackBy::Consumer => AttemptOutcome::Nacked,
        NackBy::Push => AttemptOutcome::PushFailed,
    }
}

/// What a failure writes as `last_error`: its own text, or the one before
/// when it gave none (so a dead letter keeps the reason last given).
pub(crate) fn last_error(given: Option<&str>, before: Option<&str>) -> Option<String> {
    given.or(before).map(str::to_owned)
}

/// What a message's row held when one of its hand-outs ended.
pub(crate) struct History<'a> {
    /// Its `delivery_count` (this hand-out's number).
    pub delivery_count: i32,
    /// When this hand-out began, if recorded.
    pub consumed_at: Option<Timestamp>,
    /// Its stored attempts.
    pub attempts: Option<&'a str>,
    /// Its stored last error.
    pub last_error: Option<&'a str>,
}

/// The history and last error a failed hand-out leaves on its message:
/// `failure` (`nacked`, `lease_expired`, `push_failed`) with `error`, at
/// `now`, ending as `ending`.
pub(crate) fn after_failure(
    before: &History<'_>,
    ending: Ending,
    failure: AttemptOutcome,
    error: Option<&str>,
    now: Timestamp,
) -> crate::Result<(String, Option<String>)> {
    let attempt = Attempt {
        delivery_count: before.delivery_count,
        consumed_at: before.consumed_at,
        ended_at: now,
        outcome: failure_outcome(ending, failure),
        error: error.map(str::to_owned),
    };
    Ok((
        append(before.attempts, attempt)?,
        last_error(error, before.last_error),
    ))
}

/// [`after_failure`] for a nack.
pub(crate) fn after_nack(
    before: &History<'_>,
    ending: Ending,
    p: &crate::MessageNack,
) -> crate::Result<(String, Option<String>)> {
    after_failure(
        before,
        ending,
        nack_outcome(p.by),
        p.error.as_deref(),
        p.now,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attempt(n: i32) -> Attempt {
        Attempt {
            delivery_count: n,
            consumed_at: Some(Timestamp::from_second(100).unwrap()),
            ended_at: Timestamp::from_second(130).unwrap(),
            outcome: AttemptOutcome::Nacked,
            error: Some(format!("failure {n}")),
        }
    }

    #[test]
    fn keeps_the_latest_twenty() {
        let mut stored: Option<String> = None;
        for n in 1..=25 {
            stored = Some(append(stored.as_deref(), attempt(n)).unwrap());
        }
        let kept = parse(stored.as_deref()).unwrap();
        assert_eq!(kept.len(), MAX_ATTEMPTS_KEPT);
        assert_eq!(kept[0].delivery_count, 6);
        assert_eq!(kept[19].delivery_count, 25);
    }

    #[test]
    fn lease_expiry_says_how_long_the_lease_ran() {
        let t = |s| Timestamp::from_second(s).unwrap();
        assert_eq!(
            lease_expired_error(Some(t(100)), t(130)),
            "lease expired after 30 s without ack or extend"
        );
        assert_eq!(
            lease_expired_error(None, t(130)),
            "lease expired without ack or extend"
        );
    }

    #[test]
    fn the_dead_lettering_failure_is_recorded_as_dead_lettered() {
        use AttemptOutcome::*;
        assert_eq!(
            failure_outcome(Ending::DeadLettered, PushFailed),
            DeadLettered
        );
        assert_eq!(failure_outcome(Ending::Requeued, PushFailed), PushFailed);
        assert_eq!(failure_outcome(Ending::Dropped, Nacked), Nacked);
    }

    #[test]
    fn last_error_keeps_the_reason_last_given() {
        assert_eq!(last_error(None, Some("a")).as_deref(), Some("a"));
        assert_eq!(last_error(Some("b"), Some("a")).as_deref(), Some("b"));
        assert_eq!(last_error(None, None), None);
    }
}
