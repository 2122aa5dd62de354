//! `POST /dashboard/queues/{queue}/messages/{id}/cancel`: removes one
//! message still in the queue (waiting, delayed or in flight), after the
//! dashboard's confirmation step, through the same call as
//! `POST /v1/queue/cancel` ([`Messages::cancel`](crate::messages::Messages::cancel)).
//! A selection is cancelled from the queue page ([`super::queue::selected`]).

use axum::{
    body::Bytes,
    extract::{Path, State},
    response::{IntoResponse, Redirect, Response},
};
use onceq_store::MessageCancel;
use onceq_types::scope::Action;

use super::{
    bulk,
    error::DashError,
    format::url_part,
    layout::{self, Crumb},
    message::check_id,
    queue::{self, queue_name},
    session::{SameOrigin, Viewer},
};
use crate::AppState;

/// The message's page.
fn page_url(queue: &str, id: &str) -> String {
    format!(
        "/dashboard/queues/{}/messages/{}",
        url_part(queue),
        url_part(id)
    )
}

/// Where the message's "Cancel" posts.
pub fn url(queue: &str, id: &str) -> String {
    format!("{}/cancel", page_url(queue, id))
}

/// See the module docs. The key needs `admin`, as the API's cancel does.
pub async fn cancel(
    State(state): State<AppState>,
    _: SameOrigin,
    viewer: Viewer,
    Path((queue, id)): Path<(String, String)>,
    body: Bytes,
) -> Result<Response, DashError> {
    let queue = queue_name(queue)?;
    check_id(&id)?;
    viewer.require(Action::Admin)?;
    // An unknown queue is a 404 before anything is asked.
    queue::record(&state, &viewer, &queue).await?;
    if !bulk::confirmed(&body) {
        let what = format!(
            "cancel message {id} of {queue}: it leaves the queue whatever its state \
             (a consumer holding it can no longer ack it)"
        );
        let main = bulk::confirm_page(
            &url(&queue, &id),
            &page_url(&queue, &id),
            None,
            &what,
            "Cancel the message",
        );
        let crumbs = [
            Crumb::link("Queues", "/dashboard"),
            Crumb::link(
                queue.clone(),
                format!("/dashboard/queues/{}", url_part(&queue)),
            ),
            Crumb::link(id.clone(), page_url(&queue, &id)),
            Crumb::here("Confirm"),
        ];
        return Ok(
            layout::html(layout::page("Confirm", &viewer, &crumbs, None, main)).into_response(),
        );
    }
    let cancelled = state
        .messages()
        .cancel(
            &viewer.project,
            &queue,
            MessageCancel {
                queue: viewer.queue(&queue)?,
                message_id: id.clone(),
                now: state.clock.now(),
            },
        )
        .await
        .map_err(|e| DashError::store(e, &queue))?;
    let done = if cancelled { "cancelled" } else { "gone" };
    Ok(Redirect::to(&format!("{}?done={done}", page_url(&queue, &id))).into_response())
}
