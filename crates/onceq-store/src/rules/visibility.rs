//! When a message can be handed out. A published or requeued message held
//! back by a positive delay is `delayed` until `now + delay`; otherwise it
//! is `available` at once. A delayed message whose time has come is
//! reported as `available`: the next claim promotes it, so for the caller
//! it is.
//!
//! SQL mirrors these where rows are counted or listed in bulk:
//! [`reported`] in `queue_stats.sql`, `queue_depths.sql`, `message_list.sql`
//! and `message_get.sql` (both backends); [`visible_after`]'s state in
//! PostgreSQL's `message_insert.sql` and `publish_group.sql`
//! (`delayed` exactly when `visible_at > now`; hot statements, their text
//! left as measured).

use jiff::{SignedDuration, Timestamp};
use onceq_types::MessageStatus;

use crate::{Result, StoreError};

/// The state and visibility time of a message published or requeued at
/// `now` with `delay` (zero or negative: none). `Invalid` when the time
/// falls outside the timestamps' range (the server's range checks make that
/// unreachable from the API).
pub(crate) fn visible_after(
    now: Timestamp,
    delay: SignedDuration,
) -> Result<(MessageStatus, Timestamp)> {
    if !delay.is_positive() {
        return Ok((MessageStatus::Available, now));
    }
    let at = now
        .checked_add(delay)
        .map_err(|_| StoreError::Invalid("delay is out of range".into()))?;
    Ok((MessageStatus::Delayed, at))
}

/// A message's state as reported at `now`: `delayed` turns `available`
/// once `visible_at` has come. Generic over the time's representation
/// (a timestamp, or SQLite's stored microseconds).
pub(crate) fn reported<T: PartialOrd>(
    state: MessageStatus,
    visible_at: T,
    now: T,
) -> MessageStatus {
    match state {
        MessageStatus::Delayed if visible_at <= now => MessageStatus::Available,
        state => state,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `s` seconds into the test.
    fn t(s: i64) -> Timestamp {
        Timestamp::UNIX_EPOCH + SignedDuration::from_secs(s)
    }

    #[test]
    fn a_positive_delay_holds_a_message_back() {
        let d = SignedDuration::from_secs(5);
        assert_eq!(
            visible_after(t(0), d).unwrap(),
            (MessageStatus::Delayed, t(5))
        );
        for none in [SignedDuration::ZERO, SignedDuration::from_secs(-5)] {
            assert_eq!(
                visible_after(t(0), none).unwrap(),
                (MessageStatus::Available, t(0))
            );
        }
        let err = visible_after(t(0), SignedDuration::MAX).unwrap_err();
        assert!(matches!(err, StoreError::Invalid(m) if m == "delay is out of range"));
    }

    #[test]
    fn a_due_delayed_message_is_reported_available() {
        use MessageStatus::*;
        assert_eq!(reported(Delayed, t(5), t(4)), Delayed);
        assert_eq!(reported(Delayed, t(5), t(5)), Available);
        assert_eq!(reported(Delayed, 5_i64, 6), Available);
        for other in [Available, InFlight] {
            assert_eq!(reported(other, t(5), t(0)), other);
        }
    }
}
