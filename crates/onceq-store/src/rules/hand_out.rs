//! Which published message may be handed straight to a waiting consumer
//! ([`crate::HandOut`]): exactly those a claim made at the publish's `now`
//! would hand out with nothing to check, so that handing it out at publish
//! changes nothing a consumer could tell from claiming it a moment later.
//! PostgreSQL's `sql/publish_group.sql` keeps a copy of this rule.

use onceq_types::{QueueRecord, QueueType};

/// Whether a new message that is `visible_now` (published without a
/// delay) on `queue` may be stored handed out: a standard queue (a FIFO
/// queue hands out only its groups' heads), not paused, with no hand-out
/// limit (`max_in_flight` and `rate_per_sec` count and pace claims), and
/// nothing there that a claim would hand out before it (`ahead`, asked
/// last, only when the rest allows it: see [`Ahead`]).
pub(crate) fn allowed(
    queue: &QueueRecord,
    visible_now: bool,
    ahead: impl FnOnce() -> crate::Result<Ahead>,
) -> crate::Result<bool> {
    let eligible = visible_now
        && queue.queue_type == QueueType::Standard
        && !queue.paused
        && queue.max_in_flight.is_none()
        && queue.rate_per_sec.is_none();
    Ok(eligible && !ahead()?.any())
}

/// What a claim at the publish's `now` would hand out before the new
/// message: an available message of at least its priority (older, so
/// first at equal priority), or a delayed one whose time has come (the
/// claim promotes it first; counted whatever its priority, which only
/// sends the consumer to claim). A publish that handed its message out
/// past them would leave them waiting for as long as publishes keep
/// finding consumers waiting, since those consumers never claim.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Ahead {
    pub available: bool,
    pub due: bool,
}

impl Ahead {
    fn any(self) -> bool {
        self.available || self.due
    }
}
