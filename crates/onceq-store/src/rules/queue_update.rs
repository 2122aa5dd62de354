//! `queue_update`'s decisions, apart from storing anything. An update
//! obeys the rules of a create (`queue_create`): the dead-letter queue it
//! names must exist, be standard and not be the queue itself; on top of
//! them, a queue's type never changes.

use onceq_types::{QueueRecord, QueueType, queue::QueueSettings};

use super::queue_create::{self, DeadLetterQueue};
use crate::{QueueChanges, Result, StoreError};

/// Refuses a change of type (the same type stated again changes nothing):
/// a FIFO queue's messages carry a group order a standard queue ignores,
/// and the other way round there is none to give them.
pub(crate) fn check_type(existing: &QueueRecord, changes: &QueueChanges) -> Result<()> {
    match changes.queue_type {
        Some(asked) if asked != existing.queue_type => Err(StoreError::Invalid(format!(
            "type cannot change: queue {:?} is {}; create a new {} queue instead",
            existing.name,
            existing.queue_type.as_str(),
            asked.as_str()
        ))),
        _ => Ok(()),
    }
}

/// The dead-letter queue an update names, judged as a create naming it
/// would be: `None` when the update keeps the current one, else the id of
/// the (existing, standard, other) queue `found` (its id and type).
pub(crate) fn dead_letter_queue<Id>(
    name: &str,
    changes: &QueueChanges,
    found: Option<(Id, QueueType)>,
) -> Result<Option<Id>> {
    let Some(dlq) = &changes.dead_letter_queue else {
        return Ok(None);
    };
    let asked = QueueSettings {
        dead_letter_queue: Some(dlq.clone()),
        ..QueueSettings::default()
    };
    queue_create::check_not_own_dead_letter_queue(name, &asked)?;
    match queue_create::dead_letter_queue(&asked, dlq, found)? {
        DeadLetterQueue::Existing(id) => Ok(Some(id)),
        // Only a create without a named DLQ makes one; this one is named.
        DeadLetterQueue::CreateDefault => Err(StoreError::DeadLetterQueueNotFound(dlq.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(queue_type: QueueType) -> QueueRecord {
        let s = QueueSettings::default();
        QueueRecord {
            name: "jobs".into(),
            queue_type,
            dead_letter_queue: Some("jobs-dlq".into()),
            max_retries: s.max_retries,
            message_retention_days: s.message_retention_days,
            visibility_timeout_default: s.visibility_timeout_default,
            enable_priority: s.enable_priority,
            paused: false,
            retry_backoff: None,
            max_in_flight: None,
            rate_per_sec: None,
            completed_retention_seconds: s.completed_retention_seconds,
            created_at: jiff::Timestamp::UNIX_EPOCH,
        }
    }

    fn naming(dlq: Option<&str>) -> QueueChanges {
        QueueChanges {
            dead_letter_queue: dlq.map(Into::into),
            ..QueueChanges::default()
        }
    }

    #[test]
    fn the_type_never_changes() {
        let fifo = QueueChanges {
            queue_type: Some(QueueType::Fifo),
            ..QueueChanges::default()
        };
        let err = check_type(&record(QueueType::Standard), &fifo).unwrap_err();
        assert!(matches!(err, StoreError::Invalid(m) if m.contains("type cannot change")));
        check_type(&record(QueueType::Fifo), &fifo).unwrap();
        check_type(&record(QueueType::Standard), &QueueChanges::default()).unwrap();
    }

    #[test]
    fn a_named_dead_letter_queue_is_judged_as_on_create() {
        use QueueType::{Fifo, Standard};
        assert_eq!(
            dead_letter_queue::<i64>("jobs", &naming(None), None).unwrap(),
            None
        );
        assert_eq!(
            dead_letter_queue("jobs", &naming(Some("bin")), Some((2, Standard))).unwrap(),
            Some(2)
        );
        assert!(matches!(
            dead_letter_queue::<i64>("jobs", &naming(Some("bin")), None),
            Err(StoreError::DeadLetterQueueNotFound(n)) if n == "bin"
        ));
        assert!(matches!(
            dead_letter_queue("jobs", &naming(Some("bin")), Some((2, Fifo))),
            Err(StoreError::Invalid(m)) if m.contains("FIFO")
        ));
        assert!(matches!(
            dead_letter_queue("jobs", &naming(Some("jobs")), Some((1, Standard))),
            Err(StoreError::Invalid(m)) if m.contains("own dead-letter")
        ));
    }
}
