//! The dead-letter rule: how a failed hand-out ends (a nack, or a lease
//! that expired). A message is handed out at most `max_retries + 1` times;
//! after the last, it goes to its queue's dead-letter queue. A queue without
//! one requeues it instead, unless the caller said not to retry it, when
//! there is nowhere to keep it and it is dropped (as an ack would).
//!
//! `postgres/sql/lease_expire.sql` decides the same in SQL for a whole pass
//! of expired leases ([`ending`] with `requeue: true`); the conformance
//! suite (`tests/it/dlq.rs`, `tests/it/lease.rs`) holds it to this.

/// How a lease ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// Back in its queue.
    Requeued,
    /// Moved to the dead-letter queue.
    DeadLettered,
    /// Deleted (a nack without requeue, and no dead-letter queue).
    Dropped,
}

/// Whether the hand-out that failed was the last one allowed.
pub(crate) fn out_of_retries(delivery_count: i32, max_retries: i32) -> bool {
    i64::from(delivery_count) > i64::from(max_retries)
}

/// How the failed hand-out of a message handed out `delivery_count` times
/// ends: `requeue` is the nack's (a lease that expired is `true`),
/// `has_dead_letter_queue` whether its queue has one.
pub(crate) fn ending(
    requeue: bool,
    delivery_count: i32,
    max_retries: i32,
    has_dead_letter_queue: bool,
) -> Ending {
    let give_up = !requeue || out_of_retries(delivery_count, max_retries);
    match (give_up, has_dead_letter_queue) {
        (true, true) => Ending::DeadLettered,
        (true, false) if !requeue => Ending::Dropped,
        // Out of retries but no DLQ: a queue without one requeues.
        _ => Ending::Requeued,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Ending::*;

    #[test]
    fn the_last_allowed_hand_out_is_max_retries_plus_one() {
        assert!(out_of_retries(1, 0));
        assert!(!out_of_retries(3, 3));
        assert!(out_of_retries(4, 3));
        // No overflow at the edges.
        assert!(!out_of_retries(i32::MAX, i32::MAX));
        assert!(out_of_retries(i32::MAX, i32::MAX - 1));
    }

    #[test]
    fn a_retry_requeues_until_the_last_hand_out() {
        for dlq in [true, false] {
            assert_eq!(ending(true, 1, 3, dlq), Requeued);
            assert_eq!(ending(true, 3, 3, dlq), Requeued);
        }
        assert_eq!(ending(true, 4, 3, true), DeadLettered);
        // Without a dead-letter queue, out of retries still requeues.
        assert_eq!(ending(true, 4, 3, false), Requeued);
    }

    #[test]
    fn giving_up_dead_letters_or_drops() {
        for count in [1, 4] {
            assert_eq!(ending(false, count, 3, true), DeadLettered);
            assert_eq!(ending(false, count, 3, false), Dropped);
        }
    }

    /// What `postgres/sql/lease_expire.sql` says for an expired lease:
    /// `dead_letter_queue_id IS NOT NULL AND delivery_count >= max_retries + 1`.
    #[test]
    #[allow(clippy::int_plus_one)] // written as the SQL is
    fn lease_expiry_is_the_rule_with_requeue() {
        for max_retries in 0..4 {
            for delivery_count in 0..6 {
                for dlq in [true, false] {
                    let sql = dlq && delivery_count >= max_retries + 1;
                    let expected = if sql { DeadLettered } else { Requeued };
                    assert_eq!(ending(true, delivery_count, max_retries, dlq), expected);
                }
            }
        }
    }
}
