//! One queue: its settings and depths, and its messages, paged by `seq`
//! (keyset, never OFFSET), filtered by state, searchable by message id or
//! idempotency key.

use axum::{
    extract::{Path, Query, State},
    response::{Html, IntoResponse, Response},
};
use maud::{Markup, html};
use onceq_store::{MessageList, MessagePage, MessageRecord, QueueRef};
use onceq_types::{MessageStatus, QueueRecord, QueueStats, names};
use serde::Deserialize;

use super::{
    error::DashError,
    format::{age, count, dom_id, preview, time_rel, url_part},
    layout::{self, Crumb},
    session::Viewer,
};
use crate::{AppState, validate::MAX_TOKEN_BYTES};

/// Messages per page.
pub const PAGE_SIZE: u32 = 50;

/// A queue name from the path, checked.
pub fn queue_name(name: String) -> Result<String, DashError> {
    if names::is_addressable_queue_name(&name) {
        Ok(name)
    } else {
        Err(DashError::BadRequest(format!(
            "queue (in the path) is not a valid queue name: {:?}",
            super::format::preview(&name, 40)
        )))
    }
}

/// The query string of a message listing, as sent.
#[derive(Debug, Deserialize, Default)]
pub struct ListQuery {
    /// `available`, `delayed`, `in_flight`, or empty for all.
    pub state: Option<String>,
    /// A message id or idempotency key.
    pub q: Option<String>,
    /// The paging cursor: list messages after this `seq`.
    pub after: Option<String>,
    /// Set by the purge's redirect: how many messages it deleted.
    pub purged: Option<String>,
}

/// A listing, checked.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    /// State filter.
    pub state: Option<MessageStatus>,
    /// Search text.
    pub search: Option<String>,
    /// Cursor.
    pub after: Option<i64>,
}

impl Listing {
    /// Checks a query; each failure names its field.
    pub fn parse(q: ListQuery) -> Result<Self, DashError> {
        let state = match q.state.as_deref().map(str::trim) {
            None | Some("") | Some("all") => None,
            Some("available") => Some(MessageStatus::Available),
            Some("delayed") => Some(MessageStatus::Delayed),
            Some("in_flight") => Some(MessageStatus::InFlight),
            Some(other) => {
                return Err(DashError::BadRequest(format!(
                    "state must be available, delayed, in_flight or empty (got {:?})",
                    preview(other, 40)
                )));
            }
        };
        let search = q.q.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
        if let Some(s) = &search
            && (s.len() > MAX_TOKEN_BYTES || s.chars().any(char::is_control))
        {
            return Err(DashError::BadRequest(format!(
                "q must be a message id or idempotency key: 1 to {MAX_TOKEN_BYTES} bytes, no control characters"
            )));
        }
        let after = match q.after.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(a) => Some(a.parse::<i64>().map_err(|_| {
                DashError::BadRequest(format!(
                    "after must be a whole number (a message's seq), got {:?}",
                    preview(a, 40)
                ))
            })?),
        };
        Ok(Self {
            state,
            search,
            after,
        })
    }

    /// The query string of this listing at another cursor.
    pub fn query(&self, after: Option<i64>) -> String {
        let mut parts = Vec::new();
        if let Some(state) = self.state {
            parts.push(format!("state={}", state.as_str()));
        }
        if let Some(q) = &self.search {
            parts.push(format!("q={}", url_part(q)));
        }
        if let Some(after) = after {
            parts.push(format!("after={after}"));
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!("?{}", parts.join("&"))
        }
    }
}

/// The queue's record and figures, or `NotFound`.
pub async fn load(
    state: &AppState,
    viewer: &Viewer,
    queue: &str,
) -> Result<(QueueRecord, QueueStats), DashError> {
    let (q, record) = record(state, viewer, queue).await?;
    let stats = state
        .store
        .queue_stats(&q, state.clock.now())
        .await
        .map_err(|e| DashError::store(e, queue))?;
    Ok((record, stats))
}

/// The queue `queue` the viewer may see, and its settings: not found when
/// it does not exist or the key's patterns do not match it.
pub async fn record(
    state: &AppState,
    viewer: &Viewer,
    queue: &str,
) -> Result<(QueueRef, QueueRecord), DashError> {
    let q = viewer.queue(queue)?;
    let record = state
        .store
        .queue_get(&q)
        .await
        .map_err(|e| DashError::store(e, queue))?
        .ok_or_else(|| DashError::NotFound(format!("queue {queue:?} not found")))?;
    Ok((q, record))
}

/// One page of a queue's messages.
pub async fn messages(
    state: &AppState,
    viewer: &Viewer,
    queue: &str,
    listing: &Listing,
) -> Result<MessagePage, DashError> {
    state
        .store
        .message_list(MessageList {
            queue: viewer.queue(queue)?,
            state: listing.state,
            search: listing.search.clone(),
            after_seq: listing.after,
            limit: PAGE_SIZE,
            now: state.clock.now(),
        })
        .await
        .map_err(|e| DashError::store(e, queue))
}

/// A message's state as a badge.
pub fn badge(status: MessageStatus) -> Markup {
    let (class, label) = match status {
        MessageStatus::Available => ("badge badge-available", "available"),
        MessageStatus::Delayed => ("badge badge-delayed", "delayed"),
        MessageStatus::InFlight => ("badge badge-inflight", "in flight"),
        MessageStatus::Gone => ("badge", "gone"),
    };
    html! { span class=(class) { (label) } }
}

/// The depth tiles of a queue.
fn tiles(queue: &str, s: &QueueStats) -> Markup {
    html! {
        dl.tiles aria-label="Depth" {
            div.tile { dt { "Available" } dd #stat-available { (count(s.available)) } }
            div.tile { dt { "Delayed" } dd #stat-delayed { (count(s.delayed)) } }
            div.tile { dt { "In flight" } dd #stat-in-flight { (count(s.in_flight)) } }
            div.tile.warn[s.dead_lettered > 0] {
                dt { "Dead-lettered" }
                dd #stat-dead-lettered {
                    @if s.dead_letter_queue.is_some() {
                        a #dlq-link href=(format!("/dashboard/queues/{}/dlq", url_part(queue))) { (count(s.dead_lettered)) }
                    } @else { span.muted { "no DLQ" } }
                }
            }
            div.tile { dt { "Oldest" } dd #stat-oldest {
                @if s.message_count > 0 { (age(s.oldest_message_age_seconds)) } @else { "—" }
            } }
        }
    }
}

/// A table of messages; `actions` draws each row's buttons (the DLQ's).
pub fn table(
    queue: &str,
    messages: &[MessageRecord],
    now: jiff::Timestamp,
    actions: Option<&dyn Fn(&MessageRecord) -> Markup>,
    empty: &str,
) -> Markup {
    html! {
        @if messages.is_empty() {
            div.empty { p { (empty) } }
        } @else {
            div.table-wrap {
                table.data.messages.with-actions[actions.is_some()] {
                    caption.sr-only { "Messages of " (queue) ", oldest first" }
                    thead {
                        tr {
                            th scope="col" { "Message" }
                            th scope="col" { "State" }
                            th.num scope="col" { "Deliveries" }
                            th scope="col" { "Published" }
                            th scope="col" { "Visible" }
                            @if actions.is_none() { th scope="col" { "Lease ends" } }
                            th scope="col" { "Payload" }
                            @if actions.is_some() { th scope="col" { span.sr-only { "Actions" } } }
                        }
                    }
                    tbody {
                        @for m in messages {
                            tr id=(dom_id("row-", &m.message_id)) {
                                th scope="row" {
                                    a.mono id=(dom_id("msg-", &m.message_id))
                                        href=(format!("/dashboard/queues/{}/messages/{}", url_part(queue), url_part(&m.message_id))) {
                                        (m.message_id)
                                    }
                                    @if let Some(key) = &m.idempotency_key {
                                        div.sub.mono title="Idempotency key" { "key " (key) }
                                    }
                                }
                                td data-label="State" { (badge(m.status)) }
                                td.num data-label="Deliveries" { (m.delivery_count) }
                                td data-label="Published" { (time_rel(m.created_at, now)) }
                                td data-label="Visible" { (time_rel(m.visible_at, now)) }
                                // Dead letters (the tables with actions) are rarely in
                                // flight, and their badge says so: the room goes to
                                // the buttons.
                                @if actions.is_none() {
                                    td data-label="Lease ends" {
                                        @if let Some(t) = m.lease_expires_at { (time_rel(t, now)) } @else { span.muted { "—" } }
                                    }
                                }
                                td.preview data-label="Payload" { code { (preview(&m.payload, 90)) } }
                                @if let Some(actions) = actions { td.actions { (actions(m)) } }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// "First page" and "Next page" links of a listing.
pub fn pager(base: &str, listing: &Listing, page: &MessagePage) -> Markup {
    html! {
        @if listing.after.is_some() || page.next_after_seq.is_some() {
            nav.pager aria-label="Pages" {
                @if listing.after.is_some() {
                    a.btn href=(format!("{base}{}", listing.query(None))) { "← First page" }
                }
                @if let Some(next) = page.next_after_seq {
                    a.btn href=(format!("{base}{}", listing.query(Some(next)))) { "Next page →" }
                }
            }
        }
    }
}

fn live_body(
    queue: &str,
    stats: &QueueStats,
    listing: &Listing,
    page: &MessagePage,
    now: jiff::Timestamp,
) -> Markup {
    let base = format!("/dashboard/queues/{}", url_part(queue));
    let empty = match (&listing.search, listing.state) {
        (Some(q), _) => format!("No message with id or idempotency key {q:?} here."),
        (None, Some(s)) => format!("No {} messages.", badge_word(s)),
        (None, None) if listing.after.is_some() => "No more messages.".to_owned(),
        (None, None) => "This queue holds no messages.".to_owned(),
    };
    html! {
        (tiles(queue, stats))
        (table(queue, &page.messages, now, None, &empty))
        (pager(&base, listing, page))
    }
}

fn badge_word(s: MessageStatus) -> &'static str {
    match s {
        MessageStatus::InFlight => "in-flight",
        other => other.as_str(),
    }
}

fn settings(record: &QueueRecord) -> Markup {
    html! {
        ul.settings aria-label="Settings" {
            li { span.tag { (record.queue_type.as_str()) } }
            li { "max retries " strong { (record.max_retries) } }
            li { "lease " strong { (age(record.visibility_timeout_default.into())) } }
            li { "retention " strong { (record.message_retention_days) " d" } }
            li { "priority " strong { @if record.enable_priority { "on" } @else { "off" } } }
            @if let Some(dlq) = &record.dead_letter_queue {
                li { "DLQ " a href=(format!("/dashboard/queues/{}", url_part(dlq))) { (dlq) } }
            }
        }
    }
}

fn filters(queue: &str, listing: &Listing) -> Markup {
    let base = format!("/dashboard/queues/{}", url_part(queue));
    let tab = |state: Option<MessageStatus>, label: &str| {
        let l = Listing {
            state,
            search: listing.search.clone(),
            after: None,
        };
        let current = listing.state == state;
        html! {
            a.tab href=(format!("{base}{}", l.query(None))) aria-current=[current.then_some("true")] { (label) }
        }
    };
    html! {
        div.filters {
            nav.tabs aria-label="Filter by state" {
                (tab(None, "All"))
                (tab(Some(MessageStatus::Available), "Available"))
                (tab(Some(MessageStatus::Delayed), "Delayed"))
                (tab(Some(MessageStatus::InFlight), "In flight"))
            }
            form.search method="get" action=(base) role="search" {
                @if let Some(state) = listing.state {
                    input type="hidden" name="state" value=(state.as_str());
                }
                label for="q" { "Find a message" }
                input #q type="search" name="q" value=[listing.search.as_deref()]
                    placeholder="message id or idempotency key" spellcheck="false";
                button.btn type="submit" { "Search" }
                @if listing.search.is_some() {
                    a.btn.btn-quiet href=(format!("{base}{}", Listing { search: None, ..listing.clone() }.query(None))) { "Clear" }
                }
            }
        }
    }
}

/// `GET /dashboard/queues/{queue}`.
pub async fn page(
    State(state): State<AppState>,
    viewer: Viewer,
    Path(queue): Path<String>,
    Query(q): Query<ListQuery>,
) -> Result<Response, DashError> {
    let queue = queue_name(queue)?;
    let flash = q
        .purged
        .as_deref()
        .and_then(|n| n.parse::<i64>().ok())
        .map(|n| layout::notice(&format!("Purged {queue}: {} messages deleted.", count(n))));
    let listing = Listing::parse(q)?;
    let (record, stats) = load(&state, &viewer, &queue).await?;
    let page = messages(&state, &viewer, &queue, &listing).await?;
    let subscriptions = super::subscriptions::section(&state, &viewer, &queue).await?;
    let now = state.clock.now();
    let base = format!("/dashboard/queues/{}", url_part(&queue));
    let main = html! {
        div.page-head {
            h1 { (queue) }
            (settings(&record))
            div.head-actions {
                @if record.dead_letter_queue.is_some() {
                    a.btn href=(format!("{base}/dlq")) { "Dead letters" }
                }
                a.btn.btn-danger-quiet href=(format!("{base}/purge")) { "Purge…" }
            }
        }
        (filters(&queue, &listing))
        (layout::live("queue-live", &format!("{base}/live{}", listing.query(listing.after)),
            live_body(&queue, &stats, &listing, &page, now)))
        (subscriptions)
    };
    let crumbs = [
        Crumb::link("Queues", "/dashboard"),
        Crumb::here(queue.clone()),
    ];
    Ok(layout::html(layout::page(&queue, &viewer, &crumbs, flash, main)).into_response())
}

/// `GET /dashboard/queues/{queue}/live`: depths and the current page.
pub async fn live(
    State(state): State<AppState>,
    viewer: Viewer,
    Path(queue): Path<String>,
    Query(q): Query<ListQuery>,
) -> Result<Html<String>, DashError> {
    let queue = queue_name(queue)?;
    let listing = Listing::parse(q)?;
    let (_, stats) = load(&state, &viewer, &queue).await?;
    let page = messages(&state, &viewer, &queue, &listing).await?;
    Ok(Html(
        live_body(&queue, &stats, &listing, &page, state.clock.now()).into_string(),
    ))
}
