//! Finished messages a queue keeps (`completed_retention_seconds` > 0):
//! acked ones as `completed` (with the ack's `result`), cancelled ones as
//! `cancelled`, in `onceq_finished` until `finished_at + retention`.
//!
//! **Which ack keeps.** An ack of a queue that keeps nothing must stay the
//! one statement it always was (`postgres/sql/message_ack_many.sql`, a
//! group's DELETE by primary key), and an ack names only its lease. So the
//! claim decides: a lease granted while its queue keeps finished messages
//! gets a receipt marked [`KEPT_RECEIPT_PREFIX`] (`rcpt_k…`, still `rcpt_`
//! and opaque to clients), and only an ack with such a receipt, or with
//! none (it could name any lease), takes the keeping statement, which then
//! reads the queue's setting as it is. Hence a change of
//! `completed_retention_seconds` applies to leases granted from then on,
//! as every queue setting does (queue-api-2.md §6).

use jiff::Timestamp;
use onceq_types::{Attempt, AttemptOutcome};

use crate::FinishedState;

/// The attempt a finish ends when its message was in flight (an ack
/// always; a cancel of a leased message): that hand-out, ended when the
/// message finished, as `acked` or `cancelled`, with no error. The SQLite
/// store appends it to the row's attempts as it writes the row; PostgreSQL
/// keeps the hand-out's columns (`ended_lease`, `consumed_at`, V23) and
/// appends it as it reads the row, so that a kept ack builds no JSON.
pub(crate) fn closing_attempt(
    state: FinishedState,
    delivery_count: i32,
    consumed_at: Option<Timestamp>,
    finished_at: Timestamp,
) -> Attempt {
    Attempt {
        delivery_count,
        consumed_at,
        ended_at: finished_at,
        outcome: match state {
            FinishedState::Completed => AttemptOutcome::Acked,
            FinishedState::Cancelled => AttemptOutcome::Cancelled,
        },
        error: None,
    }
}

/// The receipt prefix of a lease granted while its queue keeps finished
/// messages (PostgreSQL's `message_claim.sql` spells it too).
pub(crate) const KEPT_RECEIPT_PREFIX: &str = "rcpt_k";

/// A new receipt for a lease of a queue that keeps (`keeps`) finished
/// messages or not.
pub(crate) fn receipt(keeps: bool) -> String {
    let plain = crate::ids::receipt();
    if keeps {
        format!("{KEPT_RECEIPT_PREFIX}{}", &plain["rcpt_".len()..])
    } else {
        plain
    }
}

/// Whether an ack naming `receipt` may have to keep its message.
pub(crate) fn may_keep(receipt: Option<&str>) -> bool {
    receipt.is_none_or(|r| r.starts_with(KEPT_RECEIPT_PREFIX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_marked_receipts_and_none_may_keep() {
        let kept = receipt(true);
        let plain = receipt(false);
        assert!(kept.starts_with("rcpt_k") && kept.len() == plain.len() + 1);
        assert!(may_keep(Some(&kept)));
        assert!(
            !may_keep(Some(&plain)),
            "a plain receipt is hex after rcpt_"
        );
        assert!(may_keep(None));
    }
}
