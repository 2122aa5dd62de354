//! Which published message may be handed straight to a waiting consumer
//! ([`crate::HandOut`]): exactly those a claim made at the publish's `now`
//! would hand out with nothing to check, so that handing it out at publish
//! changes nothing a consumer could tell from claiming it a moment later.
//! PostgreSQL's `sql/message_insert_many.sql` keeps a copy of this rule.

use onceq_types::{QueueRecord, QueueType};

/// Whether a new message that is `visible_now` (published without a
/// delay) on `queue` may be stored handed out: a standard queue (a FIFO
/// queue hands out only its groups' heads), not paused, with no hand-out
/// limit (`max_in_flight` and `rate_per_sec` count and pace claims).
pub(crate) fn allowed(queue: &QueueRecord, visible_now: bool) -> bool {
    visible_now
        && queue.queue_type == QueueType::Standard
        && !queue.paused
        && queue.max_in_flight.is_none()
        && queue.rate_per_sec.is_none()
}
