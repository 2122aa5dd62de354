//! One queue: its settings and depths, and its messages, paged by `seq`
//! (keyset, never OFFSET), filtered by state and message group, searchable
//! by message id or idempotency key (indexes), or in payloads (bounded:
//! [`search`]); actions on a selection of them ([`selected`], cancel's
//! report: [`cancel_selected`]); pausing and
//! resuming it ([`controls`]) and editing its settings ([`settings_page`],
//! reading the form as the API reads an update: [`settings_form`]).

use axum::{
    extract::{Path, Query, State},
    response::{Html, IntoResponse, Response},
};
use maud::html;
use onceq_store::{MessageList, MessagePage, QueueRef};
use onceq_types::{MessageStatus, QueueRecord, QueueStats, QueueType, names};
use serde::Deserialize;

use super::{
    error::DashError,
    format::{count, preview, url_part},
    layout::{self, Crumb},
    session::Viewer,
};
use crate::{AppState, validate::MAX_TOKEN_BYTES};

pub mod cancel_selected;
pub mod controls;
mod render;
pub mod search;
pub mod selected;
pub mod settings_form;
pub mod settings_page;

pub use render::{Table, badge, pager};
use render::{View, filters, live_body, settings};

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
    /// A message id or idempotency key; with `in=payload`, a text to find
    /// in payloads.
    pub q: Option<String>,
    /// `payload` to search `q` in payloads; empty or `id` for ids and keys.
    #[serde(rename = "in")]
    pub search_in: Option<String>,
    /// A message group (FIFO queues).
    pub group: Option<String>,
    /// The paging cursor: list messages after this `seq`.
    pub after: Option<String>,
    /// Set by the purge's redirect: how many messages it deleted.
    pub purged: Option<String>,
    /// Set by a pause's (`yes`) or resume's (`no`) redirect.
    pub paused: Option<String>,
    /// Set by the settings form's redirect after a save.
    pub updated: Option<String>,
}

/// A listing, checked.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    /// State filter.
    pub state: Option<MessageStatus>,
    /// Search text.
    pub search: Option<String>,
    /// Search `search` in payloads (bounded) instead of ids and keys.
    pub in_payloads: bool,
    /// Message group filter.
    pub group: Option<String>,
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
        let in_payloads = match q.search_in.as_deref().map(str::trim) {
            None | Some("") | Some("id") => false,
            Some("payload") => true,
            Some(other) => {
                return Err(DashError::BadRequest(format!(
                    "in must be id or payload (got {:?})",
                    preview(other, 40)
                )));
            }
        };
        let group = q
            .group
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty());
        if let Some(g) = &group {
            crate::validate::token("group", g)
                .map_err(|e| DashError::BadRequest(e.message().to_owned()))?;
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
            in_payloads,
            group,
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
            if self.in_payloads {
                parts.push("in=payload".to_owned());
            }
        }
        if let Some(g) = &self.group {
            parts.push(format!("group={}", url_part(g)));
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
        .store()
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
        .store()
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
        .messages()
        .list(MessageList {
            queue: viewer.queue(queue)?,
            state: listing.state,
            search: listing.search.clone(),
            group_id: listing.group.clone(),
            after_seq: listing.after,
            limit: PAGE_SIZE,
            now: state.clock.now(),
        })
        .await
        .map_err(|e| DashError::store(e, queue))
}

/// The messages a listing shows: a page of the queue's, or, for a search
/// in payloads, its bounded matches and how far it read.
pub async fn listed(
    state: &AppState,
    viewer: &Viewer,
    queue: &str,
    listing: &Listing,
) -> Result<(MessagePage, Option<search::Bound>), DashError> {
    match (&listing.search, listing.in_payloads) {
        (Some(text), true) => {
            let (page, bound) = search::payloads(state, viewer, queue, text).await?;
            Ok((page, Some(bound)))
        }
        _ => Ok((messages(state, viewer, queue, listing).await?, None)),
    }
}

/// `GET /dashboard/queues/{queue}`.
pub async fn page(
    State(state): State<AppState>,
    viewer: Viewer,
    Path(queue): Path<String>,
    Query(q): Query<ListQuery>,
    Query(tally): Query<super::bulk::Tally>,
) -> Result<Response, DashError> {
    let queue = queue_name(queue)?;
    let flash = q
        .purged
        .as_deref()
        .and_then(|n| n.parse::<i64>().ok())
        .map(|n| layout::notice(&format!("Purged {queue}: {} messages deleted.", count(n))))
        .or_else(|| {
            q.paused
                .as_deref()
                .and_then(|p| controls::flash_text(&queue, p))
                .map(|t| layout::notice(&t))
        })
        .or_else(|| {
            q.updated
                .is_some()
                .then(|| layout::notice(&format!("Settings of {queue} saved.")))
        })
        .or_else(|| tally.text(&queue).map(|t| layout::notice(&t)));
    let listing = Listing::parse(q)?;
    let (record, stats) = load(&state, &viewer, &queue).await?;
    let (page, bound) = listed(&state, &viewer, &queue, &listing).await?;
    let subscriptions = super::subscriptions::section(&state, &viewer, &queue).await?;
    let now = state.clock.now();
    let base = format!("/dashboard/queues/{}", url_part(&queue));
    let fifo = record.queue_type == QueueType::Fifo;
    let view = View {
        queue: &queue,
        stats: &stats,
        listing: &listing,
        page: &page,
        bound: bound.as_ref(),
        fifo,
        now,
        payloads: viewer.payloads(),
    };
    let main = html! {
        div.page-head {
            h1 { (queue) }
            (settings(&record))
            div.head-actions {
                (controls::button(&queue, record.paused))
                a.btn #edit-settings href=(format!("{base}/settings")) { "Settings…" }
                @if record.dead_letter_queue.is_some() {
                    a.btn href=(format!("{base}/dlq")) { "Dead letters" }
                }
                a.btn #completed-link href=(format!("{base}/completed")) { "Completed" }
                a.btn.btn-danger-quiet href=(format!("{base}/purge")) { "Purge…" }
            }
        }
        (filters(&queue, &listing, fifo, record.completed_retention_seconds > 0, viewer.payloads()))
        (super::bulk::bar(selected::FORM_ID, &format!("{base}/selected"), &selected::ACTIONS))
        (layout::live("queue-live", &format!("{base}/live{}", listing.query(listing.after)),
            live_body(&view)))
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
    let (record, stats) = load(&state, &viewer, &queue).await?;
    let (page, bound) = listed(&state, &viewer, &queue, &listing).await?;
    let view = View {
        queue: &queue,
        stats: &stats,
        listing: &listing,
        page: &page,
        bound: bound.as_ref(),
        fifo: record.queue_type == QueueType::Fifo,
        now: state.clock.now(),
        payloads: viewer.payloads(),
    };
    Ok(Html(live_body(&view).into_string()))
}
