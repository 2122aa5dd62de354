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
use onceq_store::{DlqRedriveOne, MessageDelete, SingleOutcome};

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

fn count(tally: &mut Tally, outcome: SingleOutcome) {
    match outcome {
        SingleOutcome::Done => tally.ok += 1,
        SingleOutcome::InFlight => tally.held += 1,
        SingleOutcome::NotFound => tally.gone += 1,
    }
}

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
    let mut tally;
    if selection.action == "redrive" {
        // One `redrive_one` per id, as the API's `message_ids` does
        // (`routes::queues::redrive_ids`): the store has no redrive of
        // chosen ids in one statement, and this way each id's outcome
        // (moved, held by a DLQ consumer, gone) is known and tallied.
        tally = Tally::of("redrove");
        for id in selection.ids {
            let outcome = state
                .messages()
                .redrive_one(
                    &viewer.project,
                    &queue,
                    DlqRedriveOne {
                        queue: viewer.queue(&queue)?,
                        message_id: id,
                        now,
                    },
                )
                .await
                .map_err(|e| DashError::store(e, &queue))?;
            count(&mut tally, outcome.outcome);
        }
    } else {
        tally = Tally::of("deleted");
        for id in selection.ids {
            let outcome = state
                .store
                .message_delete(MessageDelete {
                    queue: viewer.queue(&dlq)?,
                    message_id: id,
                    now,
                })
                .await
                .map_err(|e| DashError::store(e, &dlq))?;
            count(&mut tally, outcome);
        }
    }
    Ok(Redirect::to(&format!("{back}?{}", tally.query())).into_response())
}
