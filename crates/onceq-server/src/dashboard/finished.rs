//! `GET /dashboard/queues/{queue}/completed`: the finished messages a
//! queue keeps (completed and cancelled, `completed_retention_seconds`),
//! newest first, a page at a time through the store's `finished_list`
//! cursor (a walk of the V14 index: a page costs the same wherever it is,
//! and never reads the backlog). A queue that keeps nothing says how to
//! turn it on.

use axum::{
    extract::{Path, Query, State},
    response::{IntoResponse, Response},
};
use maud::{Markup, html};
use onceq_store::{FinishedCursor, FinishedList, FinishedMessage, FinishedPage, FinishedState};
use onceq_types::QueueRecord;
use serde::Deserialize;

use super::{
    error::DashError,
    format::{age, dom_id, payload_cell, preview, time_rel, url_part},
    layout::{self, Crumb},
    life,
    queue::{self, queue_name},
    session::Viewer,
};
use crate::{AppState, payloads::PayloadGate, validate};

/// Finished messages per page.
pub const PAGE_SIZE: u32 = 50;

/// The page's query: the cursor of an older page, both parts or neither.
#[derive(Debug, Deserialize, Default)]
pub struct CursorQuery {
    /// The last listed message's end (RFC 3339).
    before_at: Option<String>,
    /// The last listed message's id.
    before_id: Option<String>,
}

impl CursorQuery {
    fn parse(self) -> Result<Option<FinishedCursor>, DashError> {
        match (self.before_at, self.before_id) {
            (None, None) => Ok(None),
            (Some(at), Some(id)) => {
                let finished_at = at.parse().map_err(|_| {
                    DashError::BadRequest(format!(
                        "before_at must be an RFC 3339 time such as 2026-01-02T03:04:05Z (got {:?}); \
                         follow the \"Older\" link rather than writing it",
                        preview(&at, 40)
                    ))
                })?;
                validate::token("before_id", &id).map_err(DashError::from_api)?;
                Ok(Some(FinishedCursor {
                    finished_at,
                    message_id: id,
                }))
            }
            _ => Err(DashError::BadRequest(
                "before_at and before_id go together (a page's cursor); give both or neither"
                    .into(),
            )),
        }
    }
}

/// The completed-jobs page of `queue`.
pub fn url(queue: &str) -> String {
    format!("/dashboard/queues/{}/completed", url_part(queue))
}

fn message_url(queue: &str, id: &str) -> String {
    format!(
        "/dashboard/queues/{}/messages/{}",
        url_part(queue),
        url_part(id)
    )
}

fn off(queue: &str) -> Markup {
    html! {
        div.notice #finished-off {
            strong { (queue) " keeps no finished messages" }
            ": an acked message is gone at once. To keep completed and cancelled messages (with the ack's result) for a while, set the queue's "
            code { "completed_retention_seconds" } " (up to 30 days) in its "
            a href=(format!("/dashboard/queues/{}/settings", url_part(queue))) { "settings" }
            " or with " code { "POST /v1/queue/update" }
            ", or the server's " code { "ONCEQ_COMPLETED_RETENTION_SECONDS" } " for queues created from now on."
        }
    }
}

fn table(
    queue: &str,
    rows: &[FinishedMessage],
    now: jiff::Timestamp,
    payloads: PayloadGate,
) -> Markup {
    html! {
        @if rows.is_empty() {
            div.empty { p { "No finished message kept. Acked and cancelled messages appear here until their time is up." } }
        } @else {
            div.table-wrap {
                table.data.messages #finished {
                    caption.sr-only { "Finished messages of " (queue) ", newest first" }
                    thead { tr {
                        th scope="col" { "Message" }
                        th scope="col" { "State" }
                        th scope="col" { "Finished" }
                        th.num scope="col" { "Deliveries" }
                        th scope="col" { "Result" }
                        th scope="col" { "Payload" }
                    } }
                    tbody {
                        @for m in rows {
                            tr id=(dom_id("row-", &m.record.message_id)) {
                                th scope="row" {
                                    a.mono id=(dom_id("msg-", &m.record.message_id))
                                        href=(message_url(queue, &m.record.message_id)) { (m.record.message_id) }
                                }
                                td data-label="State" { (life::finished_badge(m.finished.state)) }
                                td data-label="Finished" { (time_rel(m.finished.finished_at, now)) }
                                td.num data-label="Deliveries" { (m.record.delivery_count) }
                                td.preview data-label="Result" {
                                    @match (&m.finished.result, m.finished.state) {
                                        (Some(r), _) => (payload_cell(payloads, r, 90)),
                                        (None, FinishedState::Completed) => span.muted { "none" },
                                        (None, FinishedState::Cancelled) => span.muted { "—" },
                                    }
                                }
                                td.preview data-label="Payload" { (payload_cell(payloads, &m.record.payload, 60)) }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn pager(queue: &str, paged: bool, page: &FinishedPage) -> Markup {
    html! {
        @if paged || page.next.is_some() {
            nav.pager aria-label="Pages" {
                @if paged { a.btn href=(url(queue)) { "← Newest" } }
                @if let Some(next) = &page.next {
                    a.btn #finished-older href=(format!("{}?before_at={}&before_id={}", url(queue),
                        url_part(&next.finished_at.to_string()), url_part(&next.message_id))) { "Older →" }
                }
            }
        }
    }
}

async fn body(
    state: &AppState,
    viewer: &Viewer,
    queue: &str,
    record: &QueueRecord,
    before: Option<FinishedCursor>,
) -> Result<Markup, DashError> {
    if record.completed_retention_seconds <= 0 {
        return Ok(off(queue));
    }
    let paged = before.is_some();
    let page = state
        .messages()
        .finished(FinishedList {
            queue: viewer.queue(queue)?,
            before,
            limit: PAGE_SIZE,
        })
        .await
        .map_err(|e| DashError::store(e, queue))?;
    Ok(html! {
        p.sub { "Kept for " (age(i64::from(record.completed_retention_seconds))) " after they finish, newest first, " (PAGE_SIZE) " a page." }
        (table(queue, &page.messages, state.clock.now(), viewer.payloads()))
        (pager(queue, paged, &page))
    })
}

/// See the module docs.
pub async fn page(
    State(state): State<AppState>,
    viewer: Viewer,
    Path(queue): Path<String>,
    Query(cursor): Query<CursorQuery>,
) -> Result<Response, DashError> {
    let queue = queue_name(queue)?;
    let before = cursor.parse()?;
    let (_, record) = queue::record(&state, &viewer, &queue).await?;
    let body = body(&state, &viewer, &queue, &record, before).await?;
    let main = html! {
        div.page-head { h1 { "Finished messages of " (queue) } }
        (body)
    };
    let crumbs = [
        Crumb::link("Queues", "/dashboard"),
        Crumb::link(
            queue.clone(),
            format!("/dashboard/queues/{}", url_part(&queue)),
        ),
        Crumb::here("Completed"),
    ];
    Ok(layout::html(layout::page(
        &format!("Finished messages of {queue}"),
        &viewer,
        &crumbs,
        None,
        main,
    ))
    .into_response())
}
