//! Pausing and resuming a queue from its page. One click, no confirmation
//! step: either is undone by the other button, changes no message, and a
//! paused queue still accepts publishes (docs/dashboard.md). Both go
//! through [`crate::messages::Messages::pause`], the call the API's
//! `POST /v1/queue/pause|resume/{queue}` makes, so the wake-ups of a
//! resume and the paused gauge stay one path.

use axum::{
    extract::{Path, State},
    response::{IntoResponse, Redirect, Response},
};
use maud::{Markup, html};
use onceq_store::QueuePause;
use onceq_types::scope::Action;

use super::queue_name;
use crate::{
    AppState,
    dashboard::{
        error::DashError,
        format::url_part,
        session::{SameOrigin, Viewer},
    },
};

/// `POST /dashboard/queues/{queue}/pause`.
pub async fn pause(
    State(state): State<AppState>,
    _: SameOrigin,
    viewer: Viewer,
    Path(queue): Path<String>,
) -> Result<Response, DashError> {
    set_paused(&state, &viewer, queue, true).await
}

/// `POST /dashboard/queues/{queue}/resume`.
pub async fn resume(
    State(state): State<AppState>,
    _: SameOrigin,
    viewer: Viewer,
    Path(queue): Path<String>,
) -> Result<Response, DashError> {
    set_paused(&state, &viewer, queue, false).await
}

async fn set_paused(
    state: &AppState,
    viewer: &Viewer,
    queue: String,
    paused: bool,
) -> Result<Response, DashError> {
    viewer.require(Action::Admin)?;
    let queue = queue_name(queue)?;
    let target = viewer.queue(&queue)?;
    let record = state
        .messages()
        .pause(
            &viewer.project,
            &queue,
            QueuePause {
                queue: target,
                paused,
            },
        )
        .await
        .map_err(|e| DashError::store(e, &queue))?;
    let said = if record.paused { "yes" } else { "no" };
    Ok(Redirect::to(&format!(
        "/dashboard/queues/{}?paused={said}",
        url_part(&queue)
    ))
    .into_response())
}

/// What the flash says after a pause (`paused=yes`) or resume (`no`).
pub fn flash_text(queue: &str, paused: &str) -> Option<String> {
    match paused {
        "yes" => Some(format!(
            "Paused {queue}: consumers and push deliveries get nothing from it until it is resumed; publishes are still stored."
        )),
        "no" => Some(format!("Resumed {queue}: hand-outs start again.")),
        _ => None,
    }
}

/// The queue page's pause or resume button (a plain form: it works
/// without JavaScript).
pub fn button(queue: &str, paused: bool) -> Markup {
    let base = format!("/dashboard/queues/{}", url_part(queue));
    html! {
        @if paused {
            form.inline method="post" action=(format!("{base}/resume")) {
                button.btn #resume-queue type="submit" { "Resume" }
            }
        } @else {
            form.inline method="post" action=(format!("{base}/pause")) {
                button.btn #pause-queue type="submit" { "Pause" }
            }
        }
    }
}

/// The paused badge, wherever a queue's state is shown.
pub fn paused_badge() -> Markup {
    html! { span.badge.badge-paused title="Nothing is handed out until it is resumed" { "paused" } }
}
