//! Editing a queue's settings (`/dashboard/queues/{queue}/settings`).
//!
//! The form is turned into the body of `POST /v1/queue/update` and read by
//! the very same code: [`crate::extract::parse`] (field types, as a JSON
//! body is read) and [`crate::input::update`] (every range and rule), then
//! `Store::queue_update`, as the API route does. So a refused value is
//! refused with the API's message and hint, shown on the form, and nothing
//! is changed. The form's field names are the API's field paths
//! (`retry_backoff.initial_seconds`), which is how an error finds its field.

use axum::{
    Form,
    extract::{Path, State},
    http::StatusCode,
    response::{IntoResponse, Redirect, Response},
};
use maud::{Markup, html};
use onceq_store::QueueUpdate;
use onceq_types::{QueueRecord, QueueType, request::UpdateQueue, scope::Action};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{queue_name, record};
use crate::{
    ApiError, AppState,
    dashboard::{
        error::DashError,
        format::url_part,
        layout::{self, Crumb},
        session::{SameOrigin, Viewer},
    },
};

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
    /// `true` or `false`; absent on a FIFO queue (which ignores priority).
    #[serde(default)]
    enable_priority: Option<String>,
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
    // Slot: `completed_retention_seconds` (h/life) joins here and in
    // `FIELDS`, read by `input::update` like the rest.
}

impl SettingsForm {
    /// The form filled with the queue's current settings.
    fn of(r: &QueueRecord) -> Self {
        let b = r.retry_backoff.as_ref();
        Self {
            max_retries: r.max_retries.to_string(),
            visibility_timeout_default: r.visibility_timeout_default.to_string(),
            message_retention_days: r.message_retention_days.to_string(),
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
fn changes(
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

/// `GET /dashboard/queues/{queue}/settings`.
pub async fn page(
    State(state): State<AppState>,
    viewer: Viewer,
    Path(queue): Path<String>,
) -> Result<Response, DashError> {
    let queue = queue_name(queue)?;
    let (_, rec) = record(&state, &viewer, &queue).await?;
    Ok(render(&viewer, &rec, &SettingsForm::of(&rec), None).into_response())
}

/// `POST /dashboard/queues/{queue}/settings`: saves, or shows the form
/// again with the API's refusal (nothing changed).
pub async fn save(
    State(state): State<AppState>,
    _: SameOrigin,
    viewer: Viewer,
    Path(queue): Path<String>,
    Form(form): Form<SettingsForm>,
) -> Result<Response, DashError> {
    viewer.require(Action::Admin)?;
    let queue = queue_name(queue)?;
    let (target, rec) = record(&state, &viewer, &queue).await?;
    let refused = |e: ApiError| {
        let status =
            StatusCode::from_u16(e.code().http_status()).unwrap_or(StatusCode::BAD_REQUEST);
        (status, render(&viewer, &rec, &form, Some(&e))).into_response()
    };
    let input = match changes(&form, &queue, rec.queue_type == QueueType::Fifo) {
        Ok(input) => input,
        Err(e) => return Ok(refused(e)),
    };
    // Dead-lettering writes into the DLQ: the key must see it too (as the
    // API's update checks).
    if let Some(dlq) = &input.changes.dead_letter_queue
        && !viewer.may_see(dlq)
    {
        return Ok(refused(ApiError::queue_not_found(dlq)));
    }
    let saved = state
        .store
        .queue_update(QueueUpdate {
            queue: target,
            changes: input.changes,
            now: state.clock.now(),
        })
        .await;
    match saved {
        Ok(_) => Ok(Redirect::to(&format!(
            "/dashboard/queues/{}?updated=yes",
            url_part(&queue)
        ))
        .into_response()),
        Err(e) => {
            let e = ApiError::from_store(e, &queue);
            if e.code().http_status() < 500 {
                Ok(refused(e))
            } else {
                Err(DashError::from_api(e))
            }
        }
    }
}

/// The fields, by their API path, with their label and what they take.
const FIELDS: [(&str, &str, &str); 10] = [
    (
        "max_retries",
        "Max retries",
        "0 to 1 000: a message is handed out at most this + 1 times.",
    ),
    (
        "visibility_timeout_default",
        "Lease, seconds",
        "0 to 43 200: the lease a consume gets when it names none.",
    ),
    ("message_retention_days", "Retention, days", "1 to 30."),
    (
        "dead_letter_queue",
        "Dead-letter queue",
        "An existing standard queue; empty keeps the current one.",
    ),
    (
        "retry_backoff.initial_seconds",
        "Backoff: first delay, seconds",
        "1 to 604 800; all four backoff fields empty removes the backoff.",
    ),
    (
        "retry_backoff.max_seconds",
        "Backoff: longest delay, seconds",
        "From the first delay to 604 800.",
    ),
    (
        "retry_backoff.multiplier",
        "Backoff: multiplier",
        "1 to 10, default 2.",
    ),
    (
        "retry_backoff.jitter",
        "Backoff: jitter",
        "0 to 1, default 0 (1: anywhere from 0 to the delay).",
    ),
    (
        "max_in_flight",
        "Most in flight",
        "1 to 100 000 at once, across every consumer; empty: no cap.",
    ),
    (
        "rate_per_sec",
        "Hand-outs per second",
        "0.01 to 100 000; empty: no cap.",
    ),
];

/// The field an API refusal names (its message starts with the field's
/// path), if it is one of the form's.
fn field_of(e: &ApiError) -> Option<&'static str> {
    let m = e.message();
    std::iter::once("enable_priority")
        .chain(FIELDS.iter().map(|(f, _, _)| *f))
        .filter(|f| {
            m.strip_prefix(f)
                .is_some_and(|rest| rest.starts_with([' ', ':', '.', ',']) || rest.is_empty())
        })
        .max_by_key(|f| f.len())
        .or_else(|| {
            m.starts_with("retry_backoff")
                .then_some("retry_backoff.initial_seconds")
        })
        .or_else(|| {
            m.contains("dead_letter_queue")
                .then_some("dead_letter_queue")
        })
}

fn value<'a>(form: &'a SettingsForm, field: &str) -> &'a str {
    match field {
        "max_retries" => &form.max_retries,
        "visibility_timeout_default" => &form.visibility_timeout_default,
        "message_retention_days" => &form.message_retention_days,
        "dead_letter_queue" => &form.dead_letter_queue,
        "retry_backoff.initial_seconds" => &form.backoff_initial,
        "retry_backoff.max_seconds" => &form.backoff_max,
        "retry_backoff.multiplier" => &form.backoff_multiplier,
        "retry_backoff.jitter" => &form.backoff_jitter,
        "max_in_flight" => &form.max_in_flight,
        "rate_per_sec" => &form.rate_per_sec,
        _ => "",
    }
}

fn dom(field: &str) -> String {
    format!("set-{}", field.replace('.', "-"))
}

fn render(
    viewer: &Viewer,
    rec: &QueueRecord,
    form: &SettingsForm,
    error: Option<&ApiError>,
) -> axum::response::Html<String> {
    let queue = &rec.name;
    let base = format!("/dashboard/queues/{}", url_part(queue));
    let bad = error.and_then(field_of);
    let fifo = rec.queue_type == QueueType::Fifo;
    let flash = error.map(|e| {
        html! {
            div.notice.error #settings-error role="alert" {
                strong { "Not saved: " } (e.message())
                @if let Some(hint) = e.hint().or(e.code().hint()) { p.hint #settings-hint { (hint) } }
                p { "Nothing was changed." }
            }
        }
    });
    let field = |name: &'static str, label: &str, help: &str| -> Markup {
        let id = dom(name);
        let invalid = bad == Some(name);
        html! {
            div.field {
                label for=(id) { (label) }
                input id=(id) type="text" name=(name) value=(value(form, name)) spellcheck="false" autocomplete="off"
                    aria-invalid=[invalid.then_some("true")]
                    aria-describedby=(format!("{id}-help"));
                p.hint id=(format!("{id}-help")) {
                    @if invalid { span.field-error { (error.map(ApiError::message).unwrap_or_default()) } " " }
                    (help)
                }
            }
        }
    };
    let main = html! {
        div.page-head { h1 { "Settings of " (queue) } }
        form.card.settings-form #settings method="post" action=(format!("{base}/settings")) {
            p.hint { "A " (rec.queue_type.as_str()) " queue (its type is fixed). Later hand-outs follow the new settings; leases already granted keep their end." }
            @for (name, label, help) in &FIELDS[..4] { (field(name, label, help)) }
            @if !fifo {
                div.field {
                    label for="set-enable_priority" { "Priority" }
                    select #set-enable_priority name="enable_priority"
                        aria-invalid=[(bad == Some("enable_priority")).then_some("true")] {
                        @let on = form.enable_priority.as_deref() != Some("false");
                        option value="true" selected[on] { "on: publishes may set a priority" }
                        option value="false" selected[!on] { "off" }
                    }
                }
            } @else {
                p.hint { "A FIFO queue hands out in order per message group: it has no priority setting." }
            }
            fieldset.backoff {
                legend { "Retry backoff (failed hand-outs wait before they are available again)" }
                @for (name, label, help) in &FIELDS[4..8] { (field(name, label, help)) }
            }
            @for (name, label, help) in &FIELDS[8..] { (field(name, label, help)) }
            div.form-actions {
                button.btn.btn-primary #save-settings type="submit" { "Save settings" }
                a.btn.btn-quiet href=(base) { "Cancel" }
            }
        }
    };
    let crumbs = [
        Crumb::link("Queues", "/dashboard"),
        Crumb::link(queue.clone(), base.clone()),
        Crumb::here("Settings"),
    ];
    layout::html(layout::page(
        &format!("Settings of {queue}"),
        viewer,
        &crumbs,
        flash,
        main,
    ))
}
