//! The settings page of a queue (`/dashboard/queues/{queue}/settings`):
//! the form filled with its settings, and its save, which reads the form
//! as the API reads an update ([`super::settings_form`]) and shows a
//! refusal on the form, nothing changed.

use axum::{
    Form,
    extract::{Path, State},
    http::StatusCode,
    response::{IntoResponse, Redirect, Response},
};
use maud::{Markup, html};
use onceq_store::QueueUpdate;
use onceq_types::{QueueRecord, QueueType, scope::Action};

use super::{
    queue_name, record,
    settings_form::{SettingsForm, changes},
};
use crate::{
    ApiError, AppState,
    dashboard::{
        error::DashError,
        format::url_part,
        layout::{self, Crumb},
        session::{SameOrigin, Viewer},
    },
};

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
        .store()
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
const FIELDS: [(&str, &str, &str); 11] = [
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
        "completed_retention_seconds",
        "Keep finished, seconds",
        "0 to 2 592 000 (30 days): how long a completed or cancelled message stays \
         visible (its page, the Completed page); 0 keeps none.",
    ),
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
                input id=(id) type="text" name=(name) value=(form.value(name)) spellcheck="false" autocomplete="off"
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
            @for (name, label, help) in &FIELDS[..5] { (field(name, label, help)) }
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
                @for (name, label, help) in &FIELDS[5..9] { (field(name, label, help)) }
            }
            @for (name, label, help) in &FIELDS[9..] { (field(name, label, help)) }
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
