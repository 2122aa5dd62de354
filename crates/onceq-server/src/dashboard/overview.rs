//! The queues overview: the project's queues, [`PAGE_SIZE`] a page by
//! name (`?after=NAME`), with their depths, dead letters, oldest message
//! and recent throughput. Only the page's queues are counted and drawn, so
//! a project with thousands of queues costs one page's worth; the live
//! refresh sends nothing while the page is unchanged (`super::fresh`).

use std::collections::BTreeMap;

use axum::{
    extract::{Query, State},
    http::HeaderMap,
    response::{IntoResponse, Response},
};
use maud::{Markup, html};
use onceq_types::{QueueRecord, QueueStats};

use super::{
    error::DashError,
    format::{age, count, dom_id, url_part},
    fresh, layout,
    paging::{self, PAGE_SIZE, PageQuery, Window},
    session::Viewer,
    sparkline,
};
use crate::{AppState, throughput::Series};

/// What one row shows.
struct Row {
    record: QueueRecord,
    stats: QueueStats,
    series: Series,
    /// The queues whose dead-letter queue this one is.
    dlq_of: Vec<String>,
}

/// The figures of the page's queues. One `queue_stats` per queue of the
/// page (each counts that queue's messages, as `GET /v1/queue/stats`
/// does); a queue deleted in between is skipped.
async fn rows(
    state: &AppState,
    viewer: &Viewer,
    after: Option<&str>,
) -> Result<Window<Row>, DashError> {
    let records = state
        .store()
        .queue_list(&viewer.project)
        .await
        .map_err(|e| DashError::store(e, ""))?
        .into_iter()
        // A scoped key sees only the queues its patterns match.
        .filter(|r| viewer.may_see(&r.name))
        .collect::<Vec<_>>();
    let mut dlq_of: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in &records {
        if let Some(dlq) = &r.dead_letter_queue
            && viewer.may_see(dlq)
        {
            dlq_of.entry(dlq.clone()).or_default().push(r.name.clone());
        }
    }
    let now = state.clock.now();
    // Sorted by name (bytewise, as both stores list them).
    let page = paging::after(records, |r| r.name.as_str(), after);
    let mut rows = Vec::with_capacity(page.items.len());
    for record in page.items {
        let q = viewer.queue(&record.name)?;
        let stats = match state.store().queue_stats(&q, now).await {
            Ok(stats) => stats,
            Err(onceq_store::StoreError::QueueNotFound) => continue,
            Err(e) => return Err(DashError::store(e, &record.name)),
        };
        rows.push(Row {
            series: state.throughput.series(&viewer.project, &record.name, now),
            dlq_of: dlq_of.remove(&record.name).unwrap_or_default(),
            record,
            stats,
        });
    }
    Ok(Window {
        items: rows,
        skipped: page.skipped,
        total: page.total,
    })
}

fn totals(window: &Window<Row>) -> Markup {
    let rows = &window.items;
    let paged = window.total > rows.len();
    let sum = |f: fn(&Row) -> i64| rows.iter().map(f).sum::<i64>();
    // Dead letters are counted once, at their source queues.
    let dead = sum(|r| r.stats.dead_lettered);
    let (published, acked) = rows.iter().fold((0, 0), |(p, a), r| {
        let (rp, ra) = r.series.recent(6);
        (p + rp, a + ra)
    });
    html! {
        dl.tiles aria-label=(if paged { "Totals of the queues on this page" } else { "Totals" }) {
            div.tile { dt { "Queues" } dd { (count(window.total as i64)) } }
            div.tile { dt { "Available" } dd { (count(sum(|r| r.stats.available))) } }
            div.tile { dt { "Delayed" } dd { (count(sum(|r| r.stats.delayed))) } }
            div.tile { dt { "In flight" } dd { (count(sum(|r| r.stats.in_flight))) } }
            div.tile.warn[dead > 0] { dt { "Dead-lettered" } dd { (count(dead)) } }
            div.tile { dt { "Published/min" } dd { (count(published as i64)) } }
            div.tile { dt { "Acked/min" } dd { (count(acked as i64)) } }
        }
    }
}

fn table(rows: &[Row]) -> Markup {
    html! {
        @if rows.is_empty() {
            div.empty {
                p { strong { "No queues yet." } }
                p { "A queue appears here when it is created or first published to, e.g. "
                    code { "onceq publish jobs '{\"hello\":\"world\"}'" } "." }
            }
        } @else {
            div.table-wrap {
                table.data {
                    caption.sr-only { "Queues of this project, with their depths and recent throughput" }
                    thead {
                        tr {
                            th scope="col" { "Queue" }
                            th.num scope="col" { "Available" }
                            th.num scope="col" { "Delayed" }
                            th.num scope="col" { "In flight" }
                            th.num scope="col" { "Dead-lettered" }
                            th.num scope="col" { "Oldest" }
                            th scope="col" { "Throughput and failures, 15 min" }
                        }
                    }
                    tbody {
                        @for r in rows { (row(r)) }
                    }
                }
            }
            p.legend {
                span.key.key-pub aria-hidden="true" {} " published "
                span.key.key-ack aria-hidden="true" {} " acked; "
                span.key.key-fail aria-hidden="true" {} " failed (nacked or lease expired) "
                span.key.key-dead aria-hidden="true" {} " dead-lettered, per 10 s, as seen by this server process"
            }
        }
    }
}

fn row(r: &Row) -> Markup {
    let name = &r.record.name;
    let href = format!("/dashboard/queues/{}", url_part(name));
    let s = &r.stats;
    html! {
        tr {
            th scope="row" {
                a.qname id=(dom_id("queue-", name)) href=(href) { (name) }
                @if r.record.queue_type == onceq_types::QueueType::Fifo {
                    " " span.tag { "FIFO" }
                }
                @if r.record.paused {
                    " " (super::queue::controls::paused_badge())
                }
                @for source in &r.dlq_of {
                    " " span.tag.tag-dlq { "DLQ of " (source) }
                }
            }
            td.num data-label="Available" { (count(s.available)) }
            td.num data-label="Delayed" { (count(s.delayed)) }
            td.num data-label="In flight" { (count(s.in_flight)) }
            td.num data-label="Dead-lettered" {
                @if s.dead_lettered > 0 {
                    a.dead id=(dom_id("dlq-", name)) href=(format!("{href}/dlq")) { (count(s.dead_lettered)) }
                } @else if s.dead_letter_queue.is_some() {
                    "0"
                } @else {
                    span.muted title="This queue has no dead-letter queue" { "—" }
                }
            }
            td.num data-label="Oldest" {
                @if s.message_count > 0 { (age(s.oldest_message_age_seconds)) } @else { span.muted { "—" } }
            }
            // Failures under the throughput, in the same cell: a column of
            // their own would push the table past a laptop's width.
            td.spark-cell data-label="Throughput and failures" {
                div.spark-line {
                    (sparkline::chart(&r.series))
                    (sparkline::last_minute(&r.series))
                }
                div.spark-line {
                    (sparkline::failures(&r.series))
                    (sparkline::last_minute_failures(&r.series))
                }
            }
        }
    }
}

/// "First page", where this page is, "Next page".
fn pager(window: &Window<Row>) -> Markup {
    let next = window
        .has_next()
        .then(|| window.items.last())
        .flatten()
        .map(|r| format!("/dashboard?after={}", url_part(&r.record.name)));
    html! {
        @if window.skipped > 0 || next.is_some() {
            nav.pager aria-label="Pages" {
                span.muted { "Queues " (window.range()) ", " (PAGE_SIZE) " a page" }
                @if window.skipped > 0 {
                    a.btn href="/dashboard" { "← First page" }
                }
                @if let Some(next) = next {
                    a.btn rel="next" href=(next) { "Next page →" }
                }
            }
        }
    }
}

fn body(window: &Window<Row>) -> Markup {
    html! { (totals(window)) (table(&window.items)) (pager(window)) }
}

/// The live fragment's URL for the page after `after`.
fn live_url(after: Option<&str>) -> String {
    match after {
        Some(a) => format!("/dashboard/live/queues?after={}", url_part(a)),
        None => "/dashboard/live/queues".to_owned(),
    }
}

/// `GET /dashboard` (`?after=NAME`: the page after that queue).
pub async fn page(
    State(state): State<AppState>,
    viewer: Viewer,
    Query(q): Query<PageQuery>,
) -> Result<Response, DashError> {
    let after = q.after.as_deref().filter(|a| !a.is_empty());
    let window = rows(&state, &viewer, after).await?;
    let content = body(&window).into_string();
    let main = html! {
        div.page-head {
            h1 { "Queues" }
            p.sub { "The queues of project " strong { (viewer.project) } ", live." }
        }
        (fresh::region("queues-live", &live_url(after), &content))
    };
    let page = layout::page("Queues", &viewer, &[], None, main);
    Ok(layout::html(page).into_response())
}

/// `GET /dashboard/live/queues`: the live part of the overview, for the
/// same page (`?after=`); empty when it has not changed since the tag the
/// poll sends.
pub async fn live(
    State(state): State<AppState>,
    viewer: Viewer,
    Query(q): Query<PageQuery>,
    headers: HeaderMap,
) -> Result<Response, DashError> {
    let after = q.after.as_deref().filter(|a| !a.is_empty());
    let window = rows(&state, &viewer, after).await?;
    let content = body(&window).into_string();
    Ok(fresh::answer(
        &headers,
        "queues-live",
        &live_url(after),
        content,
    ))
}
