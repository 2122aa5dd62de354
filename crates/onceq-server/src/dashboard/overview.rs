//! The queues overview: every queue of the project with its depths, dead
//! letters, oldest message and recent throughput.

use std::collections::BTreeMap;

use axum::{
    extract::State,
    response::{Html, IntoResponse, Response},
};
use maud::{Markup, html};
use onceq_types::{QueueRecord, QueueStats};

use super::{
    error::DashError,
    format::{age, count, dom_id, url_part},
    layout,
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

/// Every queue's figures. One `queue_stats` per queue (each counts that
/// queue's messages, as `GET /v1/queue/stats` does); a queue deleted in
/// between is skipped.
async fn rows(state: &AppState, viewer: &Viewer) -> Result<Vec<Row>, DashError> {
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
    let mut rows = Vec::with_capacity(records.len());
    for record in records {
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
    Ok(rows)
}

fn totals(rows: &[Row]) -> Markup {
    let sum = |f: fn(&Row) -> i64| rows.iter().map(f).sum::<i64>();
    // Dead letters are counted once, at their source queues.
    let dead = sum(|r| r.stats.dead_lettered);
    let (published, acked) = rows.iter().fold((0, 0), |(p, a), r| {
        let (rp, ra) = r.series.recent(6);
        (p + rp, a + ra)
    });
    html! {
        dl.tiles aria-label="Totals" {
            div.tile { dt { "Queues" } dd { (count(rows.len() as i64)) } }
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

fn body(rows: &[Row]) -> Markup {
    html! { (totals(rows)) (table(rows)) }
}

/// `GET /dashboard`.
pub async fn page(State(state): State<AppState>, viewer: Viewer) -> Result<Response, DashError> {
    let rows = rows(&state, &viewer).await?;
    let main = html! {
        div.page-head {
            h1 { "Queues" }
            p.sub { "Every queue of project " strong { (viewer.project) } ", live." }
        }
        (layout::live("queues-live", "/dashboard/live/queues", body(&rows)))
    };
    let page = layout::page("Queues", &viewer, &[], None, main);
    Ok(layout::html(page).into_response())
}

/// `GET /dashboard/live/queues`: the live part of the overview.
pub async fn live(
    State(state): State<AppState>,
    viewer: Viewer,
) -> Result<Html<String>, DashError> {
    let rows = rows(&state, &viewer).await?;
    Ok(Html(body(&rows).into_string()))
}
