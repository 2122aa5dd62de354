//! `POST /dashboard/queues/{queue}/selected`: "with selected" on a queue's
//! messages: **delete** or **cancel** (each after a confirmation step), or
//! **promote** (a delayed message made available now). Bounded as
//! [`bulk`] says; delete and promote are tallied through the redirect,
//! cancel answers its report id by id ([`super::cancel_selected`]).

use axum::{
    body::Bytes,
    extract::{Path, State},
    response::{IntoResponse, Redirect, Response},
};
use maud::{Markup, html};
use onceq_store::{MessageIds, MessagePromote, MessageRecord, PromoteOutcome};
use onceq_types::{MessageStatus, scope::Action};

use super::super::{
    bulk::{self, Selection, Tally},
    error::DashError,
    format::url_part,
    layout::{self, Crumb},
    session::{SameOrigin, Viewer},
};
use super::{cancel_selected, queue_name, record};
use crate::AppState;

/// The actions of a queue's "with selected" bar: (value, label).
pub const ACTIONS: [(&str, &str); 3] = [
    ("promote", "Promote (run now)"),
    ("cancel", "Cancel…"),
    ("delete", "Delete…"),
];

/// The id of the queue page's "with selected" form.
pub const FORM_ID: &str = "bulk";

/// One message's buttons (its own page): the same form with its one id,
/// so promote and delete act, and ask, exactly as from the list.
pub fn one(queue: &str, m: &MessageRecord) -> Markup {
    let url = format!("/dashboard/queues/{}/selected", url_part(queue));
    html! {
        div.head-actions {
            @if m.status == MessageStatus::Delayed {
                form.inline method="post" action=(url) {
                    input type="hidden" name="action" value="promote";
                    input type="hidden" name="id" value=(m.message_id);
                    button.btn #promote-one type="submit" { "Promote (run now)" }
                }
            }
            @if m.status != MessageStatus::InFlight {
                form.inline method="post" action=(url) {
                    input type="hidden" name="action" value="delete";
                    input type="hidden" name="id" value=(m.message_id);
                    button.btn.btn-danger-quiet #delete-one type="submit" { "Delete…" }
                }
            }
        }
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
    viewer.require(Action::Admin)?;
    let selection = Selection::parse(&body, &["delete", "promote", "cancel"])?;
    let (q, _) = record(&state, &viewer, &queue).await?;
    let base = format!("/dashboard/queues/{}", url_part(&queue));
    let crumbs = |last: &str| {
        [
            Crumb::link("Queues", "/dashboard"),
            Crumb::link(queue.clone(), base.clone()),
            Crumb::here(last.to_owned()),
        ]
    };
    let asks = match selection.action.as_str() {
        "delete" => Some((format!("delete from {queue} for good"), "Delete for good")),
        "cancel" => Some((
            format!(
                "cancel in {queue}: each leaves the queue whatever its state \
                 (a consumer holding one can no longer ack it)"
            ),
            "Cancel the messages",
        )),
        _ => None,
    };
    if let Some((what, button)) = asks
        && !selection.confirmed
    {
        let main = bulk::confirm_page(
            &format!("{base}/selected"),
            &base,
            Some(&selection),
            &what,
            button,
        );
        let page = layout::page("Confirm", &viewer, &crumbs("Confirm"), None, main);
        return Ok(layout::html(page).into_response());
    }
    if selection.action == "cancel" {
        let done = cancel_selected::cancel_each(&state, &viewer, &queue, selection.ids).await?;
        let main = cancel_selected::report(&queue, &done);
        let page = layout::page("Cancelled", &viewer, &crumbs("Cancelled"), None, main);
        return Ok(layout::html(page).into_response());
    }
    let now = state.clock.now();
    let mut tally;
    if selection.action == "delete" {
        tally = Tally::of("deleted");
        let ids = MessageIds {
            queue: q.clone(),
            message_ids: selection.ids,
            now,
        };
        let outcomes = state
            .messages()
            .delete_many(&viewer.project, &queue, ids)
            .await
            .map_err(|e| DashError::store(e, &queue))?;
        tally.count(&outcomes);
    } else {
        tally = Tally::of("promoted");
        for id in selection.ids {
            let outcome = state
                .messages()
                .promote_now(
                    &viewer.project,
                    &queue,
                    MessagePromote {
                        queue: q.clone(),
                        message_id: id,
                        now,
                    },
                )
                .await
                .map_err(|e| DashError::store(e, &queue))?;
            match outcome {
                PromoteOutcome::Promoted => tally.ok += 1,
                PromoteOutcome::NotDelayed => tally.skipped += 1,
                PromoteOutcome::NotFound => tally.gone += 1,
            }
        }
    }
    Ok(Redirect::to(&format!("{base}?{}", tally.query())).into_response())
}
