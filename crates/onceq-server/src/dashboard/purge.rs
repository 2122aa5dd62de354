//! Purging a queue, behind a confirmation: the operator types the queue's
//! name, as with any irreversible bulk delete.

use axum::{
    Form,
    extract::{Path, State},
    http::StatusCode,
    response::{IntoResponse, Redirect, Response},
};
use maud::{Markup, html};
use onceq_types::{QueueStats, scope::Action};
use serde::Deserialize;

use super::{
    error::DashError,
    format::{count, url_part},
    layout::{self, Crumb},
    queue::{self, queue_name},
    session::{SameOrigin, Viewer},
};
use crate::AppState;

/// The confirmation form.
#[derive(Debug, Deserialize, Default)]
pub struct Confirm {
    /// Must equal the queue's name.
    #[serde(default)]
    pub confirm: Option<String>,
}

fn form(queue: &str, stats: &QueueStats, error: Option<&str>) -> Markup {
    let base = format!("/dashboard/queues/{}", url_part(queue));
    html! {
        div.page-head { h1 { "Purge " (queue) } }
        div.notice.danger {
            p {
                "This deletes " strong { "all " (count(stats.message_count)) " messages" } " that "
                (queue) " holds now: " (count(stats.available)) " available, " (count(stats.delayed))
                " delayed and " (count(stats.in_flight)) " in flight (their consumers' acks will find nothing)."
            }
            p { "Dead letters in its dead-letter queue stay. Idempotency keys stay, so a retried publish is still a replay. This cannot be undone." }
        }
        form.card method="post" action=(format!("{base}/purge")) {
            label for="confirm" { "Type " strong.mono { (queue) } " to confirm" }
            input #confirm type="text" name="confirm" autocomplete="off" spellcheck="false" required autofocus
                aria-invalid=[error.map(|_| "true")]
                aria-describedby=[error.map(|_| "confirm-error")];
            @if let Some(error) = error { p #confirm-error .field-error { (error) } }
            div.form-actions {
                button.btn.btn-danger type="submit" { "Purge " (queue) }
                a.btn.btn-quiet href=(base) { "Cancel" }
            }
        }
    }
}

fn crumbs(queue: &str) -> [Crumb; 3] {
    [
        Crumb::link("Queues", "/dashboard"),
        Crumb::link(
            queue.to_owned(),
            format!("/dashboard/queues/{}", url_part(queue)),
        ),
        Crumb::here("Purge"),
    ]
}

/// `GET /dashboard/queues/{queue}/purge`: the confirmation step.
pub async fn page(
    State(state): State<AppState>,
    viewer: Viewer,
    Path(queue): Path<String>,
) -> Result<Response, DashError> {
    let queue = queue_name(queue)?;
    let (_, stats) = queue::load(&state, &viewer, &queue).await?;
    let page = layout::page(
        &format!("Purge {queue}"),
        &viewer,
        &crumbs(&queue),
        None,
        form(&queue, &stats, None),
    );
    Ok(layout::html(page).into_response())
}

/// `POST /dashboard/queues/{queue}/purge`: purges if `confirm` names the
/// queue, else shows the form again saying why.
pub async fn purge(
    State(state): State<AppState>,
    _: SameOrigin,
    viewer: Viewer,
    Path(queue): Path<String>,
    Form(confirm): Form<Confirm>,
) -> Result<Response, DashError> {
    viewer.require(Action::Admin)?;
    let queue = queue_name(queue)?;
    if confirm.confirm.as_deref().map(str::trim) != Some(queue.as_str()) {
        let (_, stats) = queue::load(&state, &viewer, &queue).await?;
        let error = format!("confirm must be the queue's name, {queue}; nothing was purged.");
        let page = layout::page(
            &format!("Purge {queue}"),
            &viewer,
            &crumbs(&queue),
            None,
            form(&queue, &stats, Some(&error)),
        );
        return Ok((StatusCode::BAD_REQUEST, layout::html(page)).into_response());
    }
    let purged = state
        .messages()
        .purge(&viewer.queue(&queue)?)
        .await
        .map_err(|e| DashError::store(e, &queue))?;
    Ok(Redirect::to(&format!(
        "/dashboard/queues/{}?purged={purged}",
        url_part(&queue)
    ))
    .into_response())
}
