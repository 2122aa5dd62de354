//! "Cancel…" on a selection of a queue's messages (the "with selected"
//! menu, after its confirmation step): one
//! [`Messages::cancel_many`](crate::messages::Messages::cancel_many) for the
//! selection (one statement, each message as `POST /v1/queue/cancel`
//! cancels it), and a page saying, id by id, what
//! happened: cancelled, or no longer in the queue (acked, dead-lettered or
//! removed meanwhile). A cancel removes a message whatever its state, so
//! there is no "held" or "skipped" outcome as for delete and promote.

use maud::{Markup, html};
use onceq_store::{MessageIds, SingleOutcome};

use super::super::{
    error::DashError,
    format::{dom_id, url_part},
    session::Viewer,
};
use crate::AppState;

/// One selected message and whether its cancel removed it.
pub struct Cancelled {
    /// The message id as selected.
    pub id: String,
    /// `false`: the queue no longer held it, nothing changed.
    pub cancelled: bool,
}

/// Cancels each of `ids` in `queue`, in the order selected.
pub async fn cancel_each(
    state: &AppState,
    viewer: &Viewer,
    queue: &str,
    ids: Vec<String>,
) -> Result<Vec<Cancelled>, DashError> {
    let outcomes = state
        .messages()
        .cancel_many(
            &viewer.project,
            queue,
            MessageIds {
                queue: viewer.queue(queue)?,
                message_ids: ids.clone(),
                now: state.clock.now(),
            },
        )
        .await
        .map_err(|e| DashError::store(e, queue))?;
    Ok(ids
        .into_iter()
        .zip(outcomes)
        .map(|(id, outcome)| Cancelled {
            id,
            cancelled: outcome == SingleOutcome::Done,
        })
        .collect())
}

/// The report: how many were cancelled, then each id with its outcome,
/// linked to its page (a cancelled message kept by a retaining queue is
/// still shown there, as cancelled).
pub fn report(queue: &str, done: &[Cancelled]) -> Markup {
    let base = format!("/dashboard/queues/{}", url_part(queue));
    let ok = done.iter().filter(|d| d.cancelled).count();
    html! {
        div.page-head { h1 { "Cancelled in " (queue) } }
        div.notice.ok #cancel-report role="status" {
            "Cancelled " strong { (ok) } " of " (done.len()) " selected"
            @if ok < done.len() { "; " (done.len() - ok) " no longer in " (queue) ", nothing changed for them" }
            "."
        }
        table.data #cancel-outcomes {
            thead { tr { th { "Message" } th { "What happened" } } }
            tbody {
                @for d in done {
                    tr id=(dom_id("cancel-", &d.id)) {
                        td.mono { a href=(format!("{base}/messages/{}", url_part(&d.id))) { (d.id) } }
                        td {
                            @if d.cancelled { span.badge.badge-cancelled { "cancelled" } }
                            @else { span.muted { "gone: no longer in the queue (acked, dead-lettered or removed meanwhile)" } }
                        }
                    }
                }
            }
        }
        div.form-actions { a.btn #back-to-queue href=(base) { "Back to " (queue) } }
    }
}
