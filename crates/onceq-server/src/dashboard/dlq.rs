//! The dead letters of a queue: list, redrive all and delete one (each
//! after a confirmation step), redrive one; a selection's actions are in
//! [`dlq_selected`](super::dlq_selected).
//!
//! The page belongs to the source queue (`/dashboard/queues/jobs/dlq`) and
//! lists its dead-letter queue's messages. A DLQ shared by several queues
//! is drained into whichever queue's page the redrive was made from, as
//! `POST /v1/queue/dlq/redrive/{queue}` does.

use axum::{
    body::Bytes,
    extract::{Path, Query, State},
    http::HeaderMap,
    response::{Html, IntoResponse, Redirect, Response},
};
use maud::{Markup, html};
use onceq_store::{DlqRedrive, DlqRedriveOne, MessageDelete, MessageRecord, SingleOutcome};
use onceq_types::{QueueRecord, QueueStats, scope::Action};
use serde::Deserialize;

use super::{
    bulk,
    error::DashError,
    format::{count, dom_id, url_part},
    is_htmx,
    layout::{self, Crumb},
    queue::{self, ListQuery, Listing, queue_name},
    session::{SameOrigin, Viewer},
};
use crate::{AppState, validate};

/// The confirmation step: says `what` will happen and repeats the POST to
/// `url` with `confirm=yes`. A full page, with or without htmx.
fn confirm_step(viewer: &Viewer, queue: &str, url: &str, what: &str, button: &str) -> Response {
    let main = bulk::confirm_page(url, &base(queue), None, what, button);
    let crumbs = [
        Crumb::link("Queues", "/dashboard"),
        Crumb::link(
            queue.to_owned(),
            format!("/dashboard/queues/{}", url_part(queue)),
        ),
        Crumb::link("Dead letters", base(queue)),
        Crumb::here("Confirm"),
    ];
    layout::html(layout::page("Confirm", viewer, &crumbs, None, main)).into_response()
}

/// What the last action did, carried through a redirect (no-JS path).
#[derive(Debug, Deserialize, Default)]
pub struct Done {
    done: Option<String>,
    n: Option<i64>,
    id: Option<String>,
}

/// The DLQ's name, or `BadRequest` for a queue without one.
fn dlq_of(record: &QueueRecord) -> Result<String, DashError> {
    record.dead_letter_queue.clone().ok_or_else(|| {
        DashError::BadRequest(format!("queue {:?} has no dead-letter queue", record.name))
    })
}

/// Checks a change to `queue`'s dead letters as the API checks
/// `dlq/redrive`: the key needs `admin`, and its patterns must match both
/// the queue and the DLQ the change reads. Returns the DLQ's name.
pub(super) async fn admin_on_dlq(
    state: &AppState,
    viewer: &Viewer,
    queue: &str,
) -> Result<String, DashError> {
    viewer.require(Action::Admin)?;
    let (_, record) = queue::record(state, viewer, queue).await?;
    let dlq = dlq_of(&record)?;
    if !viewer.may_see(&dlq) {
        // The queue's record names its DLQ, so 403 hides nothing here.
        return Err(DashError::Forbidden(format!(
            "this API key's queue patterns do not match the dead-letter queue {dlq:?}."
        )));
    }
    Ok(dlq)
}

pub(super) fn base(queue: &str) -> String {
    format!("/dashboard/queues/{}/dlq", url_part(queue))
}

fn row_actions(queue: &str) -> impl Fn(&MessageRecord) -> Markup + '_ {
    move |m: &MessageRecord| {
        let id = url_part(&m.message_id);
        html! {
            form.inline method="post" action=(format!("{}/{id}/redrive", base(queue)))
                hx-post=(format!("{}/{id}/redrive", base(queue))) hx-target="#dlq-live" hx-swap="innerHTML" {
                button.btn.btn-small id=(dom_id("redrive-", &m.message_id)) type="submit"
                    aria-label=(format!("Redrive {}", m.message_id)) { "Redrive" }
            }
            form.inline method="post" action=(format!("{}/{id}/delete", base(queue)))
                hx-post=(format!("{}/{id}/delete", base(queue))) hx-target="#dlq-live" hx-swap="innerHTML"
                hx-confirm=(format!("Delete {} for good?", m.message_id)) hx-vals=r#"{"confirm":"yes"}"# {
                button.btn.btn-small.btn-danger-quiet id=(dom_id("delete-", &m.message_id)) type="submit"
                    aria-label=(format!("Delete {}", m.message_id)) { "Delete" }
            }
        }
    }
}

async fn live_body(
    state: &AppState,
    viewer: &Viewer,
    queue: &str,
    listing: &Listing,
) -> Result<(QueueRecord, QueueStats, Markup), DashError> {
    let (record, stats) = queue::load(state, viewer, queue).await?;
    let Some(dlq) = record.dead_letter_queue.clone() else {
        let body = html! {
            div.notice { "Queue " strong { (queue) } " has no dead-letter queue: failed messages go back to it instead." }
        };
        return Ok((record, stats, body));
    };
    let page = queue::messages(state, viewer, &dlq, listing).await?;
    let actions = row_actions(queue);
    let body = html! {
        div.dlq-bar {
            dl.tiles aria-label="Dead letters" {
                div.tile.warn[stats.dead_lettered > 0] { dt { "Dead-lettered" } dd #dlq-count { (count(stats.dead_lettered)) } }
                div.tile { dt { "Available in " (queue) } dd #source-available { (count(stats.available)) } }
            }
            @if stats.dead_lettered > 0 {
                // A plain form: its answer is the confirmation step.
                form method="post" action=(format!("{}/redrive", base(queue))) {
                    button.btn.btn-primary #redrive-all type="submit" {
                        "Redrive " @if stats.dead_lettered > 1 { "all " } (plural(stats.dead_lettered)) " to " (queue) "…"
                    }
                }
            }
        }
        (super::dlq_table::render(queue, &page.messages, state.clock.now(), &actions, super::dlq_selected::FORM_ID, viewer.payloads()))
        (queue::pager(&base(queue), listing, &page))
    };
    Ok((record, stats, body))
}

fn flash_text(done: &Done, queue: &str) -> Option<Markup> {
    let id = done.id.as_deref().unwrap_or("the message");
    let text = match done.done.as_deref()? {
        "redrove" => format!("Redrove {} to {queue}.", plural(done.n.unwrap_or(0))),
        "redrove_one" => format!("Redrove {id} to {queue}."),
        "deleted" => format!("Deleted {id}."),
        "in_flight" => format!(
            "{id} is in flight (a consumer of the dead-letter queue holds it); nothing changed."
        ),
        "gone" => format!("{id} is no longer in the dead-letter queue; nothing changed."),
        _ => return None,
    };
    Some(match done.done.as_deref() {
        Some("in_flight" | "gone") => layout::notice_error(&text),
        _ => layout::notice(&text),
    })
}

fn plural(n: i64) -> String {
    if n == 1 {
        "1 message".into()
    } else {
        format!("{} messages", count(n))
    }
}

/// `GET /dashboard/queues/{queue}/dlq`.
pub async fn page(
    State(state): State<AppState>,
    viewer: Viewer,
    Path(queue): Path<String>,
    Query(q): Query<ListQuery>,
    Query(done): Query<Done>,
    Query(tally): Query<super::bulk::Tally>,
) -> Result<Response, DashError> {
    let queue = queue_name(queue)?;
    let listing = Listing {
        state: None,
        ..Listing::parse(q)?
    };
    let (record, _, body) = live_body(&state, &viewer, &queue, &listing).await?;
    let main = html! {
        div.page-head {
            h1 { "Dead letters of " (queue) }
            @if let Some(dlq) = &record.dead_letter_queue {
                p.sub { "Stored in " a href=(format!("/dashboard/queues/{}", url_part(dlq))) { (dlq) }
                    ". A redrive moves a message back to " (queue) " with its delivery count reset." }
            }
        }
        @if record.dead_letter_queue.is_some() {
            (super::bulk::bar(super::dlq_selected::FORM_ID, &format!("{}/selected", base(&queue)), &super::dlq_selected::ACTIONS))
        }
        (layout::live("dlq-live", &format!("{}/live{}", base(&queue), listing.query(listing.after)), body))
    };
    let crumbs = [
        Crumb::link("Queues", "/dashboard"),
        Crumb::link(
            queue.clone(),
            format!("/dashboard/queues/{}", url_part(&queue)),
        ),
        Crumb::here("Dead letters"),
    ];
    let flash =
        flash_text(&done, &queue).or_else(|| tally.text(&queue).map(|t| layout::notice(&t)));
    Ok(layout::html(layout::page(
        &format!("Dead letters of {queue}"),
        &viewer,
        &crumbs,
        flash,
        main,
    ))
    .into_response())
}

/// `GET /dashboard/queues/{queue}/dlq/live`.
pub async fn live(
    State(state): State<AppState>,
    viewer: Viewer,
    Path(queue): Path<String>,
    Query(q): Query<ListQuery>,
) -> Result<Html<String>, DashError> {
    let queue = queue_name(queue)?;
    let listing = Listing {
        state: None,
        ..Listing::parse(q)?
    };
    let (_, _, body) = live_body(&state, &viewer, &queue, &listing).await?;
    Ok(Html(body.into_string()))
}

/// The answer to an action: for htmx the refreshed list and the flash (out
/// of band); otherwise a redirect to the page, which shows the flash.
async fn answer(
    state: &AppState,
    viewer: &Viewer,
    queue: &str,
    headers: &HeaderMap,
    done: Done,
) -> Result<Response, DashError> {
    if is_htmx(headers) {
        let (_, _, body) = live_body(state, viewer, queue, &Listing::default()).await?;
        let flash = flash_text(&done, queue).unwrap_or_default();
        return Ok(Html(html! { (body) (layout::flash_oob(flash)) }.into_string()).into_response());
    }
    let mut q = format!("?done={}", done.done.as_deref().unwrap_or(""));
    if let Some(n) = done.n {
        q.push_str(&format!("&n={n}"));
    }
    if let Some(id) = &done.id {
        q.push_str(&format!("&id={}", url_part(id)));
    }
    Ok(Redirect::to(&format!("{}{q}", base(queue))).into_response())
}

fn single(outcome: SingleOutcome, done: &str, id: String) -> Done {
    let done = match outcome {
        SingleOutcome::Done => done,
        SingleOutcome::InFlight => "in_flight",
        SingleOutcome::NotFound => "gone",
    };
    Done {
        done: Some(done.into()),
        n: None,
        id: Some(id),
    }
}

/// `POST /dashboard/queues/{queue}/dlq/redrive`: every dead letter back.
pub async fn redrive_all(
    State(state): State<AppState>,
    _: SameOrigin,
    viewer: Viewer,
    Path(queue): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, DashError> {
    let queue = queue_name(queue)?;
    admin_on_dlq(&state, &viewer, &queue).await?;
    if !bulk::confirmed(&body) {
        let (_, stats) = queue::load(&state, &viewer, &queue).await?;
        let what = format!(
            "redrive all {} dead letters back to {queue}",
            count(stats.dead_lettered)
        );
        return Ok(confirm_step(
            &viewer,
            &queue,
            &format!("{}/redrive", base(&queue)),
            &what,
            "Redrive all",
        ));
    }
    let outcome = state
        .messages()
        .redrive(
            &viewer.project,
            &queue,
            DlqRedrive {
                queue: viewer.queue(&queue)?,
                max: None,
                now: state.clock.now(),
            },
        )
        .await
        .map_err(|e| DashError::store(e, &queue))?;
    let done = Done {
        done: Some("redrove".into()),
        n: Some(outcome.redriven),
        id: None,
    };
    answer(&state, &viewer, &queue, &headers, done).await
}

/// `POST /dashboard/queues/{queue}/dlq/{id}/redrive`.
pub async fn redrive_one(
    State(state): State<AppState>,
    _: SameOrigin,
    viewer: Viewer,
    Path((queue, id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Response, DashError> {
    let queue = queue_name(queue)?;
    validate::token("message id (in the path)", &id)?;
    admin_on_dlq(&state, &viewer, &queue).await?;
    let outcome = state
        .messages()
        .redrive_one(
            &viewer.project,
            &queue,
            DlqRedriveOne {
                queue: viewer.queue(&queue)?,
                message_id: id.clone(),
                now: state.clock.now(),
            },
        )
        .await
        .map_err(|e| DashError::store(e, &queue))?;
    let done = single(outcome.outcome, "redrove_one", id);
    answer(&state, &viewer, &queue, &headers, done).await
}

/// `POST /dashboard/queues/{queue}/dlq/{id}/delete`.
pub async fn delete_one(
    State(state): State<AppState>,
    _: SameOrigin,
    viewer: Viewer,
    Path((queue, id)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, DashError> {
    let queue = queue_name(queue)?;
    validate::token("message id (in the path)", &id)?;
    let dlq = admin_on_dlq(&state, &viewer, &queue).await?;
    if !bulk::confirmed(&body) {
        let url = format!("{}/{}/delete", base(&queue), url_part(&id));
        let what = format!("delete dead letter {id} from {dlq} for good");
        return Ok(confirm_step(
            &viewer,
            &queue,
            &url,
            &what,
            "Delete for good",
        ));
    }
    let outcome = state
        .messages()
        .delete(MessageDelete {
            queue: viewer.queue(&dlq)?,
            message_id: id.clone(),
            now: state.clock.now(),
        })
        .await
        .map_err(|e| DashError::store(e, &dlq))?;
    let done = single(outcome, "deleted", id);
    answer(&state, &viewer, &queue, &headers, done).await
}
