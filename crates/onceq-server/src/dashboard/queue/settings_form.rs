//! The settings form as `POST /v1/queue/update` reads it.
//!
//! The form is turned into the body of `POST /v1/queue/update` and read by
//! the very same code: [`crate::extract::parse`] (field types, as a JSON
//! body is read) and [`crate::input::update`] (every range and rule), then
//! `Store::queue_update`, as the API route does. So a refused value is
//! refused with the API's message and hint, shown on the form, and nothing
//! is changed. The form's field names are the API's field paths
//! (`retry_backoff.initial_seconds`), which is how an error finds its field.

use onceq_types::{QueueRecord, request::UpdateQueue};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::ApiError;

/// The form as sent: every value as typed. An empty whole-number field
/// keeps its setting; an empty cap (`max_in_flight`, `rate_per_sec`) or an
/// all-empty backoff removes it, as `null` does in the API.
#[derive(Debug, Deserialize, Default, Clone)]
pub struct SettingsForm {
    #[serde(default)]
    max_retries: String,
    #[serde(default)]
    visibility_timeout_default: String,
    #[serde(default)]
    message_retention_days: String,
    /// Seconds a completed or cancelled message is kept; 0 keeps none.
    #[serde(default)]
    completed_retention_seconds: String,
    /// `true` or `false`; absent on a FIFO queue (which ignores priority).
    #[serde(default)]
    pub(super) enable_priority: Option<String>,
    #[serde(default)]
    dead_letter_queue: String,
    #[serde(default, rename = "retry_backoff.initial_seconds")]
    backoff_initial: String,
    #[serde(default, rename = "retry_backoff.max_seconds")]
    backoff_max: String,
    #[serde(default, rename = "retry_backoff.multiplier")]
    backoff_multiplier: String,
    #[serde(default, rename = "retry_backoff.jitter")]
    backoff_jitter: String,
    #[serde(default)]
    max_in_flight: String,
    #[serde(default)]
    rate_per_sec: String,
}

impl SettingsForm {
    /// The form filled with the queue's current settings.
    pub(super) fn of(r: &QueueRecord) -> Self {
        let b = r.retry_backoff.as_ref();
        Self {
            max_retries: r.max_retries.to_string(),
            visibility_timeout_default: r.visibility_timeout_default.to_string(),
            message_retention_days: r.message_retention_days.to_string(),
            completed_retention_seconds: r.completed_retention_seconds.to_string(),
            enable_priority: Some(r.enable_priority.to_string()),
            dead_letter_queue: r.dead_letter_queue.clone().unwrap_or_default(),
            backoff_initial: b.map(|b| b.initial_seconds.to_string()).unwrap_or_default(),
            backoff_max: b.map(|b| b.max_seconds.to_string()).unwrap_or_default(),
            backoff_multiplier: b.map(|b| b.multiplier.to_string()).unwrap_or_default(),
            backoff_jitter: b.map(|b| b.jitter.to_string()).unwrap_or_default(),
            max_in_flight: r.max_in_flight.map(|n| n.to_string()).unwrap_or_default(),
            rate_per_sec: r.rate_per_sec.map(|n| n.to_string()).unwrap_or_default(),
        }
    }

    /// What the form holds for the field at API path `field`.
    pub(super) fn value(&self, field: &str) -> &str {
        match field {
            "max_retries" => &self.max_retries,
            "visibility_timeout_default" => &self.visibility_timeout_default,
            "message_retention_days" => &self.message_retention_days,
            "completed_retention_seconds" => &self.completed_retention_seconds,
            "dead_letter_queue" => &self.dead_letter_queue,
            "retry_backoff.initial_seconds" => &self.backoff_initial,
            "retry_backoff.max_seconds" => &self.backoff_max,
            "retry_backoff.multiplier" => &self.backoff_multiplier,
            "retry_backoff.jitter" => &self.backoff_jitter,
            "max_in_flight" => &self.max_in_flight,
            "rate_per_sec" => &self.rate_per_sec,
            _ => "",
        }
    }

    /// The `update` body this form asks for, as JSON.
    fn body(&self, queue: &str, fifo: bool) -> Value {
        let mut body = Map::new();
        body.insert("name".into(), Value::from(queue));
        for (field, text) in [
            ("max_retries", &self.max_retries),
            (
                "visibility_timeout_default",
                &self.visibility_timeout_default,
            ),
            ("message_retention_days", &self.message_retention_days),
            (
                "completed_retention_seconds",
                &self.completed_retention_seconds,
            ),
        ] {
            if let Some(v) = number(text) {
                body.insert(field.into(), v);
            }
        }
        if !fifo && let Some(p) = &self.enable_priority {
            let v = match p.trim() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                other => Value::from(other),
            };
            body.insert("enable_priority".into(), v);
        }
        let dlq = self.dead_letter_queue.trim();
        if !dlq.is_empty() {
            body.insert("dead_letter_queue".into(), Value::from(dlq));
        }
        let mut backoff = Map::new();
        for (field, text) in [
            ("initial_seconds", &self.backoff_initial),
            ("max_seconds", &self.backoff_max),
            ("multiplier", &self.backoff_multiplier),
            ("jitter", &self.backoff_jitter),
        ] {
            if let Some(v) = number(text) {
                backoff.insert(field.into(), v);
            }
        }
        let backoff = if backoff.is_empty() {
            Value::Null
        } else {
            Value::Object(backoff)
        };
        body.insert("retry_backoff".into(), backoff);
        for (field, text) in [
            ("max_in_flight", &self.max_in_flight),
            ("rate_per_sec", &self.rate_per_sec),
        ] {
            body.insert(field.into(), number(text).unwrap_or(Value::Null));
        }
        Value::Object(body)
    }
}

/// A typed value as JSON: a number when it reads as one, else the text
/// itself (which the API's reader then refuses, naming the field).
/// `None` when left empty.
fn number(text: &str) -> Option<Value> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    Some(if let Ok(n) = t.parse::<i64>() {
        Value::from(n)
    } else if let Some(n) = t.parse::<f64>().ok().filter(|n| n.is_finite()) {
        Value::from(n)
    } else {
        Value::from(t)
    })
}

/// Reads the form as `POST /v1/queue/update` reads its body.
pub(super) fn changes(
    form: &SettingsForm,
    queue: &str,
    fifo: bool,
) -> Result<crate::input::UpdateInput, ApiError> {
    let body = serde_json::to_vec(&form.body(queue, fifo)).expect("a JSON value serializes");
    let req: UpdateQueue = crate::extract::parse(&body).map_err(without_position)?;
    crate::input::update(req)
}

/// The JSON reader's refusal without its position in the JSON body
/// ("... at line 1 column 95"), which the form's user never wrote.
fn without_position(e: ApiError) -> ApiError {
    let m = e.message();
    let Some(at) = m.rfind(" at line ") else {
        return e;
    };
    let tail = &m[at + " at line ".len()..];
    let positional = tail.split_once(" column ").is_some_and(|(l, c)| {
        [l, c]
            .iter()
            .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    });
    if !positional {
        return e;
    }
    let stripped = ApiError::invalid(&m[..at]);
    match e.hint() {
        Some(h) => stripped.with_hint(h),
        None => stripped,
    }
}
