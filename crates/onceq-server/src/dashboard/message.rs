//! One message: its state (in the queue, dead-lettered, or kept finished),
//! what the store knows of its history, its attempts and last error
//! ([`life`]), its headers and its payload; "Cancel" for one
//! still in the queue ([`cancel`](super::cancel)).
//!
//! The store keeps a message's current state, not a log of its events: the
//! history shown is what that state tells (published, delayed or requeued
//! until, handed out N times, the current lease). A per-message event log
//! would cost a write on every state change of the hot path; see
//! docs/dashboard.md.

use axum::{
    extract::{Path, Query, State},
    response::{Html, IntoResponse, Response},
};
use maud::{Markup, html};
use onceq_store::{FoundMessage, MessageGet, MessageRecord};
use onceq_types::{MessageStatus, QueueRecord};
use serde::Deserialize;

use super::{
    error::DashError,
    format::{count, pretty, time_full, url_part, withheld},
    layout::{self, Crumb},
    life,
    queue::{self, badge, queue_name},
    session::Viewer,
};
use crate::{AppState, payloads::PayloadGate, validate};

/// The queue's record and the message, wherever the queue has it: in the
/// queue, in its dead-letter queue, or kept finished.
pub(super) async fn load(
    state: &AppState,
    viewer: &Viewer,
    queue: &str,
    id: &str,
) -> Result<(QueueRecord, Option<FoundMessage>), DashError> {
    let (q, record) = queue::record(state, viewer, queue).await?;
    let message = state
        .messages()
        .find(MessageGet {
            queue: q,
            message_id: id.to_owned(),
            now: state.clock.now(),
        })
        .await
        .map_err(|e| DashError::store(e, queue))?;
    Ok((record, message))
}

fn history(record: &QueueRecord, m: &MessageRecord, now: jiff::Timestamp) -> Markup {
    let allowed = record.max_retries + 1;
    html! {
        ol.timeline {
            li { span.when { (time_full(m.created_at, now)) } " Published." }
            @if m.visible_at > m.created_at {
                li {
                    span.when { (time_full(m.visible_at, now)) }
                    @if m.visible_at > now {
                        " Delayed until then."
                    } @else if m.delivery_count > 0 || m.status != MessageStatus::Delayed {
                        " Last made available (end of a delay, a requeue, a dead-lettering or a redrive)."
                    } @else {
                        " Its delay ended."
                    }
                }
            }
            li {
                @if m.delivery_count == 0 {
                    "Not handed out yet"
                } @else {
                    "Handed out " strong { (m.delivery_count) } " time" @if m.delivery_count != 1 { "s" }
                }
                @if record.dead_letter_queue.is_some() {
                    " (dead-lettered after " (allowed) " failed hand-out" @if allowed != 1 { "s" } ")."
                } @else {
                    "."
                }
            }
            @if let Some(lease) = m.lease_expires_at {
                li.now {
                    span.when { (time_full(lease, now)) }
                    " In flight: the current lease ends then, unless the consumer acks, nacks or extends it."
                }
            } @else {
                li.now { "Now " (badge(m.status)) "." }
            }
        }
        p.hint {
            "onceq keeps each message's current state, not a log of its events; this is what that state tells."
        }
    }
}

fn facts(queue: &str, found: &FoundMessage) -> Markup {
    let m = &found.record;
    html! {
        dl.facts {
            div { dt { "State" } dd #message-state { (life::state_badge(found)) } }
            div { dt { "Queue" } dd { a href=(format!("/dashboard/queues/{}", url_part(queue))) { (queue) } } }
            div { dt { "Deliveries" } dd #message-deliveries { (m.delivery_count) } }
            div { dt { "Priority" } dd { (m.priority) } }
            div { dt { "Group" } dd.mono { @if let Some(g) = &m.group_id { (g) } @else { span.muted { "—" } } } }
            div { dt { "Idempotency key" } dd.mono { @if let Some(k) = &m.idempotency_key { (k) } @else { span.muted { "—" } } } }
            div { dt { "Sequence" } dd.mono { (m.seq) } }
        }
    }
}

/// The message's headers, in name order (as stored); nothing when it has
/// none.
fn headers(m: &MessageRecord) -> Markup {
    let headers = crate::headers::stored(m.headers.as_deref()).unwrap_or_default();
    html! {
        @if !headers.is_empty() {
            h2 { "Headers " span.muted { "(" (headers.len()) ")" } }
            div.table-wrap {
                table.data.headers {
                    caption.sr-only { "Headers of the message, by name" }
                    thead { tr { th scope="col" { "Name" } th scope="col" { "Value" } } }
                    tbody {
                        @for (name, value) in &headers {
                            tr { th.mono scope="row" { (name) } td.mono { (value) } }
                        }
                    }
                }
            }
        }
    }
}

fn live_body(
    queue: &str,
    record: &QueueRecord,
    found: Option<&FoundMessage>,
    now: jiff::Timestamp,
    payloads: PayloadGate,
) -> Markup {
    html! {
        @match found {
            Some(found) => {
                (facts(queue, found))
                (life::last_error(&found.record))
                @if let Some(finished) = &found.finished {
                    (life::ending(finished, now, payloads))
                } @else {
                    h2 { "History" }
                    @if found.dead_lettered {
                        p #message-dead-lettered {
                            "Dead-lettered: it is in the dead-letter queue. "
                            a href=(super::dlq::base(queue)) { "Redrive or delete it there" } "."
                        }
                    }
                    (history(record, &found.record, now))
                }
                (life::attempts(&found.record.attempts, now))
            }
            None => div.notice {
                strong { "This message is no longer in " (queue) "." }
                " It was acked, dead-lettered, redriven, purged or removed by retention"
                @if record.completed_retention_seconds > 0 {
                    ", or it finished longer ago than the queue keeps finished messages"
                } @else {
                    " (the queue keeps no finished messages: completed_retention_seconds is 0)"
                }
                "."
            }
        }
    }
}

/// The buttons of a message still in the queue: promote and delete (as
/// the queue's selection does them) and cancel (after a confirmation).
fn actions(queue: &str, found: &FoundMessage) -> Markup {
    let m = &found.record;
    html! {
        @if found.finished.is_none() && !found.dead_lettered {
            // One row: the selection's buttons (their own `head-actions`)
            // and Cancel.
            div.head-actions.message-actions {
                (queue::selected::one(queue, m))
                form.inline method="post" action=(super::cancel::url(queue, &m.message_id)) {
                    button.btn.btn-danger-quiet #cancel-one type="submit" { "Cancel…" }
                }
            }
        }
    }
}

/// What the last action on the message did, carried through a redirect.
#[derive(Debug, Deserialize, Default)]
pub struct Done {
    done: Option<String>,
}

fn flash(done: &Done, queue: &str, id: &str) -> Option<Markup> {
    Some(match done.done.as_deref()? {
        "cancelled" => layout::notice(&format!("Cancelled {id}.")),
        "gone" => layout::notice_error(&format!(
            "{id} is no longer in {queue} (acked, dead-lettered or removed meanwhile); nothing changed."
        )),
        _ => return None,
    })
}

pub(super) fn check_id(id: &str) -> Result<(), DashError> {
    validate::token("message id (in the path)", id).map_err(DashError::from_api)
}

/// `GET /dashboard/queues/{queue}/messages/{id}`.
pub async fn page(
    State(state): State<AppState>,
    viewer: Viewer,
    Path((queue, id)): Path<(String, String)>,
    Query(done): Query<Done>,
) -> Result<Response, DashError> {
    let queue = queue_name(queue)?;
    check_id(&id)?;
    let (record, found) = load(&state, &viewer, &queue, &id).await?;
    let now = state.clock.now();
    let base = format!(
        "/dashboard/queues/{}/messages/{}",
        url_part(&queue),
        url_part(&id)
    );
    let main = html! {
        div.page-head {
            h1 { "Message " span.mono { (id) } }
            @if let Some(found) = &found { (actions(&queue, found)) }
        }
        (layout::live("message-live", &format!("{base}/live"), live_body(&queue, &record, found.as_ref(), now, viewer.payloads())))
        @if let Some(found) = &found {
            (headers(&found.record))
            h2 { "Payload " span.muted { "(" (count(found.record.payload.len() as i64)) " bytes)" } }
            @match viewer.payloads().reveal(&found.record.payload) {
                Some(payload) => pre.payload tabindex="0" aria-label="Payload" { code { (pretty(payload)) } },
                None => p #payload-withheld { (withheld()) ": this API key may not read payloads (it lacks the " code { "peek" } " action)." },
            }
        }
    };
    let crumbs = [
        Crumb::link("Queues", "/dashboard"),
        Crumb::link(
            queue.clone(),
            format!("/dashboard/queues/{}", url_part(&queue)),
        ),
        Crumb::here(id.clone()),
    ];
    Ok(layout::html(layout::page(
        &format!("Message {id}"),
        &viewer,
        &crumbs,
        flash(&done, &queue, &id),
        main,
    ))
    .into_response())
}

/// `GET /dashboard/queues/{queue}/messages/{id}/live`.
pub async fn live(
    State(state): State<AppState>,
    viewer: Viewer,
    Path((queue, id)): Path<(String, String)>,
) -> Result<Html<String>, DashError> {
    let queue = queue_name(queue)?;
    check_id(&id)?;
    let (record, found) = load(&state, &viewer, &queue, &id).await?;
    Ok(Html(
        live_body(
            &queue,
            &record,
            found.as_ref(),
            state.clock.now(),
            viewer.payloads(),
        )
        .into_string(),
    ))
}
