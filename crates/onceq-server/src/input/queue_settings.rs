//! A queue's settings as `create` and `update` read them: one rule per
//! setting, so the two calls cannot disagree on a range. Each answers
//! `None` when the field was left out (create then takes the default,
//! update keeps the current value).

use onceq_types::{
    MAX_COMPLETED_RETENTION_SECONDS, MAX_RETENTION_DAYS, MAX_VISIBILITY_TIMEOUT_SECONDS,
};

use super::MAX_RETRIES;
use crate::{ApiError, validate};

fn within(field: &str, value: Option<i64>, min: i64, max: i64) -> Result<Option<i32>, ApiError> {
    value
        .map(|v| validate::int_in(field, Some(v), min, max, v).map(|v| v as i32))
        .transpose()
}

/// `max_retries`: 0..=[`MAX_RETRIES`].
pub(super) fn max_retries(value: Option<i64>) -> Result<Option<i32>, ApiError> {
    within("max_retries", value, 0, MAX_RETRIES)
}

/// `message_retention_days`: 1..=30.
pub(super) fn message_retention_days(value: Option<i64>) -> Result<Option<i32>, ApiError> {
    within("message_retention_days", value, 1, MAX_RETENTION_DAYS)
}

/// `visibility_timeout_default`: 0..=43 200 seconds.
pub(super) fn visibility_timeout_default(value: Option<i64>) -> Result<Option<i32>, ApiError> {
    within(
        "visibility_timeout_default",
        value,
        0,
        MAX_VISIBILITY_TIMEOUT_SECONDS,
    )
}

/// `completed_retention_seconds`: 0..=2 592 000 seconds (30 days).
pub(crate) fn completed_retention_seconds(value: Option<i64>) -> Result<Option<i32>, ApiError> {
    within(
        "completed_retention_seconds",
        value,
        0,
        MAX_COMPLETED_RETENTION_SECONDS,
    )
}

/// `dead_letter_queue` of queue `name`: a queue name other than `name`
/// (whether it exists, and is standard, the store decides:
/// `onceq-store`'s `rules::queue_create`).
pub(super) fn dead_letter_queue(
    name: &str,
    value: Option<String>,
) -> Result<Option<String>, ApiError> {
    let Some(dlq) = value else {
        return Ok(None);
    };
    validate::queue_name("dead_letter_queue", &dlq)?;
    if dlq == name {
        return Err(ApiError::invalid(
            "dead_letter_queue must be another queue than the queue itself",
        ));
    }
    Ok(Some(dlq))
}
