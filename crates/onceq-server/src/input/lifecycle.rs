//! A message's life in hand (queue-api-2.md §5): `cancel`, and the
//! dead letters a `dlq/redrive` names.

use onceq_types::request::{Cancel, Redrive};

use crate::{ApiError, validate};

/// The most dead letters one `dlq/redrive` may name (`message_ids`).
pub const MAX_REDRIVE_IDS: usize = 100;

/// `cancel`: the queue and the message.
pub fn cancel(req: Cancel) -> Result<(String, String), ApiError> {
    Ok((
        validate::required_queue("queue", req.queue)?,
        validate::required_token("message_id", req.message_id)?,
    ))
}

/// What a `dlq/redrive` moves.
#[derive(Debug, PartialEq, Eq)]
pub enum RedriveInput {
    /// At most this many, oldest first (`None`: all).
    Some(Option<i64>),
    /// These dead letters (distinct, in the order given).
    Ids(Vec<String>),
}

/// `dlq/redrive`.
pub fn redrive(req: Redrive) -> Result<RedriveInput, ApiError> {
    let Some(ids) = req.message_ids else {
        let max = req
            .max_messages
            .map(|m| validate::int_in("max_messages", Some(m), 1, i64::MAX, 1))
            .transpose()?;
        return Ok(RedriveInput::Some(max));
    };
    if req.max_messages.is_some() {
        return Err(
            ApiError::invalid("message_ids and max_messages cannot be given together")
                .with_hint("name the dead letters to move, or how many, not both"),
        );
    }
    if ids.is_empty() || ids.len() > MAX_REDRIVE_IDS {
        return Err(ApiError::invalid(format!(
            "message_ids must hold 1 to {MAX_REDRIVE_IDS} ids (got {})",
            ids.len()
        ))
        .with_hint(format!(
            "redrive at most {MAX_REDRIVE_IDS} chosen dead letters per call, or leave message_ids out to move them all"
        )));
    }
    let mut distinct = Vec::with_capacity(ids.len());
    for (i, id) in ids.into_iter().enumerate() {
        validate::token(&format!("message_ids[{i}]"), &id)?;
        if !distinct.contains(&id) {
            distinct.push(id);
        }
    }
    Ok(RedriveInput::Ids(distinct))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(ids: &[&str]) -> Redrive {
        Redrive {
            max_messages: None,
            message_ids: Some(ids.iter().map(|s| s.to_string()).collect()),
        }
    }

    #[test]
    fn message_ids_are_bounded_checked_and_deduplicated() {
        assert_eq!(
            redrive(ids(&["a", "b", "a"])).unwrap(),
            RedriveInput::Ids(vec!["a".into(), "b".into()])
        );
        assert!(redrive(ids(&[])).is_err());
        let many: Vec<String> = (0..=MAX_REDRIVE_IDS).map(|i| format!("m{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(redrive(ids(&many)).is_err());
        let bad = redrive(ids(&["ok", "has\u{0}nul"])).unwrap_err();
        assert!(format!("{bad:?}").contains("message_ids[1]"), "{bad:?}");
    }
}
