//! A queue's settings as `create` and `update` read them: one rule per
//! setting, so the two calls cannot disagree on a range. Each answers
//! `None` when the field was left out (create then takes the default,
//! update keeps the current value).

use onceq_types::queue::{
    MAX_BACKOFF_MULTIPLIER, MAX_BACKOFF_SECONDS, MAX_IN_FLIGHT_CAP, MAX_RATE_PER_SEC,
    MIN_RATE_PER_SEC,
};
use onceq_types::request::RetryBackoffBody;
use onceq_types::{
    MAX_COMPLETED_RETENTION_SECONDS, MAX_RETENTION_DAYS, MAX_VISIBILITY_TIMEOUT_SECONDS,
    RetryBackoff,
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

/// `retry_backoff`: `initial_seconds` 1..=604 800 and `max_seconds`
/// `initial_seconds`..=604 800 (both required), `multiplier` 1..=10
/// (default 2), `jitter` 0..=1 (default 0). Each refusal names the field
/// as `retry_backoff.<field>`.
pub(super) fn retry_backoff(body: RetryBackoffBody) -> Result<RetryBackoff, ApiError> {
    let required = |field: &str, value: Option<i64>| {
        value.ok_or_else(|| {
            ApiError::invalid(format!("retry_backoff.{field} is required"))
                .with_hint("send retry_backoff as {initial_seconds, max_seconds, multiplier?, jitter?}, or null to remove it")
        })
    };
    let initial = required("initial_seconds", body.initial_seconds)?;
    let initial = validate::int_in(
        "retry_backoff.initial_seconds",
        Some(initial),
        1,
        MAX_BACKOFF_SECONDS,
        initial,
    )?;
    let max = required("max_seconds", body.max_seconds)?;
    let max = validate::int_in(
        "retry_backoff.max_seconds",
        Some(max),
        initial,
        MAX_BACKOFF_SECONDS,
        max,
    )?;
    let fraction = |field: &str, value: Option<f64>, min: f64, max: f64, default: f64| {
        let v = value.unwrap_or(default);
        if v.is_finite() && (min..=max).contains(&v) {
            Ok(v)
        } else {
            Err(ApiError::invalid(format!(
                "retry_backoff.{field} must be between {min} and {max} (got {v})"
            )))
        }
    };
    Ok(RetryBackoff {
        initial_seconds: initial as i32,
        multiplier: fraction(
            "multiplier",
            body.multiplier,
            1.0,
            MAX_BACKOFF_MULTIPLIER,
            2.0,
        )?,
        max_seconds: max as i32,
        jitter: fraction("jitter", body.jitter, 0.0, 1.0, 0.0)?,
    })
}

/// `max_in_flight`: 1..=100 000 messages in flight at once.
pub(super) fn max_in_flight(value: Option<i64>) -> Result<Option<i32>, ApiError> {
    within("max_in_flight", value, 1, MAX_IN_FLIGHT_CAP)
}

/// `max_in_flight` as `update` reads it (any JSON number): a whole one.
pub(super) fn max_in_flight_number(value: f64) -> Result<i32, ApiError> {
    if value.fract() != 0.0 || !value.is_finite() {
        return Err(ApiError::invalid(format!(
            "max_in_flight must be an integer (got {value})"
        )));
    }
    let whole = value as i64;
    Ok(max_in_flight(Some(whole))?.unwrap_or(whole as i32))
}

/// `rate_per_sec`: 0.01..=100 000 hand-outs per second.
pub(super) fn rate_per_sec(value: Option<f64>) -> Result<Option<f64>, ApiError> {
    match value {
        None => Ok(None),
        Some(v) if v.is_finite() && (MIN_RATE_PER_SEC..=MAX_RATE_PER_SEC).contains(&v) => {
            Ok(Some(v))
        }
        Some(v) => Err(ApiError::invalid(format!(
            "rate_per_sec must be between {MIN_RATE_PER_SEC} and {MAX_RATE_PER_SEC} (got {v})"
        ))),
    }
}
