//! How a queue's page is drawn: state badges, depth tiles, the message
//! table, its pager and filters, the settings card.

use maud::{Markup, html};
use onceq_store::{MessagePage, MessageRecord};
use onceq_types::{MessageStatus, QueueRecord, QueueStats};

use super::super::format::{age, count, dom_id, payload_cell, time_rel, url_part};
use super::Listing;
use crate::payloads::PayloadGate;

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
pub(super) fn tiles(queue: &str, s: &QueueStats) -> Markup {
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

/// A table of messages and what it shows beside the messages.
pub struct Table<'a> {
    /// The queue whose pages the ids link to.
    pub queue: &'a str,
    /// The rows.
    pub messages: &'a [MessageRecord],
    /// For the relative times.
    pub now: jiff::Timestamp,
    /// Each row's buttons, if any.
    pub actions: Option<&'a dyn Fn(&MessageRecord) -> Markup>,
    /// What an empty table says.
    pub empty: &'a str,
    /// The id of the "with selected" form the rows' checkboxes join.
    pub select: Option<&'a str>,
    /// Show each message's group (FIFO queues).
    pub groups: bool,
    /// Whether the viewer may read the payloads.
    pub payloads: PayloadGate,
}

impl Table<'_> {
    /// The table, or the empty notice.
    pub fn render(&self) -> Markup {
        let Table {
            queue,
            messages,
            now,
            actions,
            empty,
            select,
            groups,
            payloads,
        } = *self;
        html! {
            @if messages.is_empty() {
                div.empty { p { (empty) } }
            } @else {
                div.table-wrap {
                    table.data.messages.with-actions[actions.is_some()] {
                        caption.sr-only { "Messages of " (queue) ", oldest first" }
                        thead {
                            tr {
                                @if select.is_some() { th scope="col" { span.sr-only { "Select" } } }
                                th scope="col" { "Message" }
                                @if groups { th scope="col" { "Group" } }
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
                                    @if let Some(form) = select {
                                        td.select-cell { (super::super::bulk::checkbox(form, &m.message_id)) }
                                    }
                                    th scope="row" {
                                        a.mono id=(dom_id("msg-", &m.message_id))
                                            href=(format!("/dashboard/queues/{}/messages/{}", url_part(queue), url_part(&m.message_id))) {
                                            (m.message_id)
                                        }
                                        @if let Some(key) = &m.idempotency_key {
                                            div.sub.mono title="Idempotency key" { "key " (key) }
                                        }
                                    }
                                    @if groups {
                                        td.mono data-label="Group" {
                                            @if let Some(g) = &m.group_id {
                                                a href=(format!("/dashboard/queues/{}?group={}", url_part(queue), url_part(g))) { (g) }
                                            } @else { span.muted { "—" } }
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
                                    td.preview data-label="Payload" { (payload_cell(payloads, &m.payload, 90)) }
                                    @if let Some(actions) = actions { td.actions { (actions(m)) } }
                                }
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

/// What the live part of a queue's page shows.
pub(super) struct View<'a> {
    pub queue: &'a str,
    pub stats: &'a QueueStats,
    pub listing: &'a Listing,
    pub page: &'a MessagePage,
    /// How far a payload search read, when the listing is one.
    pub bound: Option<&'a super::search::Bound>,
    pub fifo: bool,
    pub now: jiff::Timestamp,
    /// Whether the viewer may read the payloads.
    pub payloads: PayloadGate,
}

pub(super) fn live_body(v: &View<'_>) -> Markup {
    let (queue, listing) = (v.queue, v.listing);
    let base = format!("/dashboard/queues/{}", url_part(queue));
    let empty = match (&listing.search, listing.state, &listing.group) {
        (Some(q), _, _) if listing.in_payloads => {
            format!("No message among the newest searched has {q:?} in its payload.")
        }
        (Some(q), _, _) => format!("No message with id or idempotency key {q:?} here."),
        (None, _, Some(g)) => format!("No messages in group {g:?}."),
        (None, Some(s), None) => format!("No {} messages.", badge_word(s)),
        (None, None, None) if listing.after.is_some() => "No more messages.".to_owned(),
        (None, None, None) => "This queue holds no messages.".to_owned(),
    };
    let table = Table {
        queue,
        messages: &v.page.messages,
        now: v.now,
        actions: None,
        empty: &empty,
        select: Some(super::selected::FORM_ID),
        groups: v.fifo,
        payloads: v.payloads,
    };
    html! {
        (tiles(queue, v.stats))
        @if let Some(bound) = v.bound { (super::search::note(bound)) }
        (table.render())
        (pager(&base, listing, v.page))
    }
}

pub(super) fn badge_word(s: MessageStatus) -> &'static str {
    match s {
        MessageStatus::InFlight => "in-flight",
        other => other.as_str(),
    }
}

pub(super) fn settings(record: &QueueRecord) -> Markup {
    html! {
        ul.settings #settings-list aria-label="Settings" {
            li { span.tag { (record.queue_type.as_str()) } }
            @if record.paused { li { (super::controls::paused_badge()) } }
            li { "max retries " strong { (record.max_retries) } }
            li { "lease " strong { (age(record.visibility_timeout_default.into())) } }
            li { "retention " strong { (record.message_retention_days) " d" } }
            @if record.completed_retention_seconds > 0 {
                li #keeps-finished { "keeps finished " strong { (age(record.completed_retention_seconds.into())) } }
            }
            // A FIFO queue ignores priority (stored as 0): saying "on" or
            // "off" would claim a setting it does not have.
            @if record.queue_type != onceq_types::QueueType::Fifo {
                li { "priority " strong { @if record.enable_priority { "on" } @else { "off" } } }
            } @else {
                li { "in order per message group" }
            }
            @if let Some(dlq) = &record.dead_letter_queue {
                li { "DLQ " a href=(format!("/dashboard/queues/{}", url_part(dlq))) { (dlq) } }
            }
            @if let Some(b) = &record.retry_backoff {
                li title=(format!("multiplier {}, jitter {}", b.multiplier, b.jitter)) {
                    "backoff " strong { (age(b.initial_seconds.into())) " → " (age(b.max_seconds.into())) }
                    " ×" (b.multiplier)
                }
            }
            @if let Some(n) = record.max_in_flight { li { "in flight ≤ " strong { (count(n.into())) } } }
            @if let Some(r) = record.rate_per_sec { li { "rate ≤ " strong { (r) "/s" } } }
        }
    }
}

/// The state tabs, the search and (FIFO) the group filter. `retains`:
/// the queue keeps finished messages, so a "Completed" tab leads to them
/// (their own page: they are not in the queue's listing).
pub(super) fn filters(
    queue: &str,
    listing: &Listing,
    fifo: bool,
    retains: bool,
    payloads: PayloadGate,
) -> Markup {
    let base = format!("/dashboard/queues/{}", url_part(queue));
    let tab = |state: Option<MessageStatus>, label: &str| {
        let l = Listing {
            state,
            after: None,
            ..listing.clone()
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
                @if retains {
                    a.tab #completed-tab href=(format!("{base}/completed")) { "Completed" }
                }
            }
            form.search method="get" action=(base) role="search" {
                @if let Some(state) = listing.state {
                    input type="hidden" name="state" value=(state.as_str());
                }
                label for="q" { "Find a message" }
                input #q type="search" name="q" value=[listing.search.as_deref()]
                    placeholder="id, idempotency key or payload text" spellcheck="false";
                label.sr-only for="search-in" { "Search in" }
                select #search-in name="in" {
                    option value="id" selected[!listing.in_payloads] { "ids and keys" }
                    // A search in payloads tells which hold a text: only
                    // for keys that may read them.
                    @if !payloads.withheld() {
                        option value="payload" selected[listing.in_payloads] {
                            "payloads (newest " (super::search::SCAN) ")"
                        }
                    }
                }
                @if fifo {
                    label for="group" { "Group" }
                    input #group type="text" name="group" value=[listing.group.as_deref()]
                        placeholder="any" spellcheck="false" size="10";
                }
                button.btn type="submit" { "Search" }
                @if listing.search.is_some() || listing.group.is_some() {
                    a.btn.btn-quiet href=(format!("{base}{}", Listing { search: None, group: None, in_payloads: false, ..listing.clone() }.query(None))) { "Clear" }
                }
            }
        }
    }
}
