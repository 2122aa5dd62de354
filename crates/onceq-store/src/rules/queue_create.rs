//! `queue_create`'s decisions, apart from storing anything: the dead-letter
//! queue a create names, whether an existing queue answers it, and which
//! queues may become a dead-letter queue.

use onceq_types::{QueueRecord, QueueType, names::default_dlq_name, queue::QueueSettings};

use crate::{QueueCreated, Result, StoreError};

/// The dead-letter queue `settings` give queue `name`: the one they name,
/// or `<name>-dlq`.
pub(crate) fn dead_letter_queue_name(name: &str, settings: &QueueSettings) -> String {
    settings
        .dead_letter_queue
        .clone()
        .unwrap_or_else(|| default_dlq_name(name))
}

/// Refuses settings that make queue `name` its own dead-letter queue.
pub(crate) fn check_not_own_dead_letter_queue(name: &str, settings: &QueueSettings) -> Result<()> {
    if dead_letter_queue_name(name, settings) == name {
        return Err(StoreError::Invalid(format!(
            "queue {name:?} cannot be its own dead-letter queue"
        )));
    }
    Ok(())
}

/// The answer to a create of a queue that exists already: `created: false`
/// when it has exactly the settings asked for (its dead-letter queue
/// compared by name, `None` asked meaning `<name>-dlq`), else
/// `QueueAlreadyExists`.
pub(crate) fn answer_existing(
    existing: QueueRecord,
    asked: &QueueSettings,
) -> Result<QueueCreated> {
    let wanted = QueueSettings {
        dead_letter_queue: Some(dead_letter_queue_name(&existing.name, asked)),
        ..asked.clone()
    };
    if settings_of(&existing) == wanted {
        Ok(QueueCreated {
            record: existing,
            created: false,
        })
    } else {
        Err(StoreError::QueueAlreadyExists(Box::new(existing)))
    }
}

/// The settings a stored queue has, its dead-letter queue by name. A struct
/// literal, so a new setting cannot be left out of the comparison above.
fn settings_of(record: &QueueRecord) -> QueueSettings {
    QueueSettings {
        queue_type: record.queue_type,
        dead_letter_queue: record.dead_letter_queue.clone(),
        max_retries: record.max_retries,
        message_retention_days: record.message_retention_days,
        visibility_timeout_default: record.visibility_timeout_default,
        enable_priority: record.enable_priority,
        retry_backoff: record.retry_backoff,
        max_in_flight: record.max_in_flight,
        rate_per_sec: record.rate_per_sec,
        completed_retention_seconds: record.completed_retention_seconds,
    }
}

/// What a create does about its dead-letter queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DeadLetterQueue<Id> {
    /// Use the queue of that name (its id).
    Existing(Id),
    /// Create `<name>-dlq` with default settings and no dead-letter queue
    /// of its own (dead letters do not cascade).
    CreateDefault,
}

/// What a create with `asked` does about its dead-letter queue `dlq`,
/// given the queue of that name if there is one (its id and type): a named
/// one must exist, the default one is created if missing, and either must
/// be a standard queue.
pub(crate) fn dead_letter_queue<Id>(
    asked: &QueueSettings,
    dlq: &str,
    found: Option<(Id, QueueType)>,
) -> Result<DeadLetterQueue<Id>> {
    match (found, &asked.dead_letter_queue) {
        (Some((id, queue_type)), _) => {
            check_dead_letter_target(dlq, queue_type)?;
            Ok(DeadLetterQueue::Existing(id))
        }
        (None, Some(_)) => Err(StoreError::DeadLetterQueueNotFound(dlq.to_owned())),
        (None, None) => Ok(DeadLetterQueue::CreateDefault),
    }
}

/// Queue `dlq`, of `queue_type`, may become a dead-letter queue only if it
/// is a standard queue: dead letters arrive out of any group's order, and a
/// FIFO queue takes new messages only at its groups' tails, under their
/// locks (see the `store` docs and `postgres/sql/message_claim.sql`).
pub(crate) fn check_dead_letter_target(dlq: &str, queue_type: QueueType) -> Result<()> {
    match queue_type {
        QueueType::Standard => Ok(()),
        QueueType::Fifo => Err(StoreError::Invalid(format!(
            "dead-letter queue {dlq:?} is a FIFO queue; a dead-letter queue must be a standard queue"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(name: &str, dlq: Option<&str>) -> QueueRecord {
        let s = QueueSettings::default();
        QueueRecord {
            name: name.into(),
            queue_type: s.queue_type,
            dead_letter_queue: dlq.map(Into::into),
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

    fn naming(dlq: Option<&str>) -> QueueSettings {
        QueueSettings {
            dead_letter_queue: dlq.map(Into::into),
            ..QueueSettings::default()
        }
    }

    #[test]
    fn the_dead_letter_queue_is_the_named_one_or_name_dlq() {
        assert_eq!(dead_letter_queue_name("jobs", &naming(None)), "jobs-dlq");
        assert_eq!(dead_letter_queue_name("jobs", &naming(Some("bin"))), "bin");
    }

    #[test]
    fn a_queue_cannot_be_its_own_dead_letter_queue() {
        let err = check_not_own_dead_letter_queue("jobs", &naming(Some("jobs"))).unwrap_err();
        assert!(matches!(err, StoreError::Invalid(m) if m.contains("own dead-letter")));
        check_not_own_dead_letter_queue("jobs", &naming(None)).unwrap();
        check_not_own_dead_letter_queue("jobs", &naming(Some("bin"))).unwrap();
        // `<name>-dlq` is never the queue itself, even for a name ending so.
        check_not_own_dead_letter_queue("jobs-dlq", &naming(None)).unwrap();
    }

    #[test]
    fn an_existing_queue_answers_only_the_same_settings() {
        // No DLQ asked: the existing one must have `<name>-dlq`.
        let same = answer_existing(record("jobs", Some("jobs-dlq")), &naming(None)).unwrap();
        assert!(!same.created);
        answer_existing(record("jobs", Some("bin")), &naming(Some("bin"))).unwrap();
        // A queue whose DLQ is gone (or a DLQ itself) has none: a conflict.
        for (existing, asked) in [
            (record("jobs", None), naming(None)),
            (record("jobs", Some("jobs-dlq")), naming(Some("bin"))),
            (record("jobs", Some("bin")), naming(None)),
        ] {
            let err = answer_existing(existing, &asked).unwrap_err();
            assert!(matches!(err, StoreError::QueueAlreadyExists(_)), "{err:?}");
        }
        let other = QueueSettings {
            max_retries: 7,
            ..QueueSettings::default()
        };
        let err = answer_existing(record("jobs", Some("jobs-dlq")), &other).unwrap_err();
        assert!(matches!(err, StoreError::QueueAlreadyExists(_)));
    }

    #[test]
    fn a_dead_letter_queue_is_standard_named_ones_must_exist() {
        use DeadLetterQueue::*;
        use QueueType::{Fifo, Standard};
        let (default, named) = (naming(None), naming(Some("bin")));
        assert_eq!(
            dead_letter_queue::<i64>(&default, "jobs-dlq", None).unwrap(),
            CreateDefault
        );
        assert_eq!(
            dead_letter_queue(&default, "jobs-dlq", Some((1, Standard))).unwrap(),
            Existing(1)
        );
        assert_eq!(
            dead_letter_queue(&named, "bin", Some((2, Standard))).unwrap(),
            Existing(2)
        );
        assert!(matches!(
            dead_letter_queue::<i64>(&named, "bin", None),
            Err(StoreError::DeadLetterQueueNotFound(n)) if n == "bin"
        ));
        for asked in [&default, &named] {
            assert!(matches!(
                dead_letter_queue(asked, "x", Some((3, Fifo))),
                Err(StoreError::Invalid(m)) if m.contains("FIFO")
            ));
        }
    }
}
