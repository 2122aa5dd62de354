//! `POST /dashboard/queues/{queue}/dlq/selected`: "with selected" on a
//! queue's dead letters: **redrive** them back to the queue or **delete**
//! them for good, both after a confirmation step. Bounded and tallied as
//! [`bulk`] says; the checks are those of the single-message
//! actions (`admin`, and the key's patterns must match the DLQ).

use axum::{
    body::Bytes,
    extract::{Path, State},
    response::{IntoResponse, Redirect, Response},
};
use onceq_store::MessageIds;

use super::{
    bulk::{self, Selection, Tally},
    dlq::{admin_on_dlq, base},
    error::DashError,
    format::url_part,
    layout::{self, Crumb},
    queue::queue_name,
    session::{SameOrigin, Viewer},
};
use crate::AppState;

/// The actions of the dead-letter page's "with selected" bar.
pub const ACTIONS: [(&str, &str); 2] = [("redrive", "Redrive…"), ("delete", "Delete…")];

/// The id of the dead-letter page's "with selected" form.
pub const FORM_ID: &str = "dlq-bulk";

/// See the module docs.
pub async fn apply(
    State(state): State<AppState>,
    _: SameOrigin,
    viewer: Viewer,
    Path(queue): Path<String>,
    body: Bytes,
) -> Result<Response, DashError> {
    let queue = queue_name(queue)?;
    let selection = Selection::parse(&body, &["redrive", "delete"])?;
    let dlq = admin_on_dlq(&state, &viewer, &queue).await?;
    let back = base(&queue);
    if !selection.confirmed {
        let (what, button) = if selection.action == "redrive" {
            (format!("redrive back to {queue}"), "Redrive")
        } else {
            (format!("delete from {dlq} for good"), "Delete for good")
        };
        let main = bulk::confirm_page(
            &format!("{back}/selected"),
            &back,
            Some(&selection),
            &what,
            button,
        );
        let crumbs = [
            Crumb::link("Queues", "/dashboard"),
            Crumb::link(
                queue.clone(),
                format!("/dashboard/queues/{}", url_part(&queue)),
            ),
            Crumb::link("Dead letters", back.clone()),
            Crumb::here("Confirm"),
        ];
        let page = layout::page("Confirm", &viewer, &crumbs, None, main);
        return Ok(layout::html(page).into_response());
    }
    let now = state.clock.now();
    // The whole selection in one store call (one transaction), as the
    // API's `dlq/redrive` with `message_ids` does.
    let mut tally;
    if selection.action == "redrive" {
        tally = Tally::of("redrove");
        let ids = MessageIds {
            queue: viewer.queue(&queue)?,
            message_ids: selection.ids,
            now,
        };
        let moved = state
            .messages()
            .redrive_many(&viewer.project, &queue, ids)
            .await
            .map_err(|e| DashError::store(e, &queue))?;
        tally.count(&moved.outcomes);
    } else {
        tally = Tally::of("deleted");
        let ids = MessageIds {
            queue: viewer.queue(&dlq)?,
            message_ids: selection.ids,
            now,
        };
        let outcomes = state
            .messages()
            .delete_many(&viewer.project, &dlq, ids)
            .await
            .map_err(|e| DashError::store(e, &dlq))?;
        tally.count(&outcomes);
    }
    Ok(Redirect::to(&format!("{back}?{}", tally.query())).into_response())
}
