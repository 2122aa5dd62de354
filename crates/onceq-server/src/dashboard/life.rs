//! What a message's life shows on its page: its state wherever it is (in
//! the queue, dead-lettered, completed or cancelled), the last failure
//! reason, the attempt history, and a completed one's result.
//!
//! Every text shown here was written by a consumer (a nack's `error`, an
//! ack's `result`): maud escapes it, and long texts are folded into a
//! `<details>` so one huge stack trace does not push the page away.

use maud::{Markup, html};
use onceq_store::{Finished, FinishedState, FoundMessage, MessageRecord};
use onceq_types::{Attempt, AttemptOutcome};

use crate::payloads::PayloadGate;

use super::{
    format::{pretty, preview, time_full, time_rel, withheld},
    queue::badge,
};

/// Texts longer than this (in characters) are folded; the summary shows
/// their start.
const FOLD_AT: usize = 160;

/// A message's state as a badge, including the states the queue's own
/// badge does not know (dead-lettered, completed, cancelled).
pub fn state_badge(found: &FoundMessage) -> Markup {
    match (&found.finished, found.dead_lettered) {
        (Some(f), _) => finished_badge(f.state),
        (None, true) => html! { span.badge.badge-dead { "dead-lettered" } },
        (None, false) => badge(found.record.status),
    }
}

/// `completed` or `cancelled` as a badge.
pub fn finished_badge(state: FinishedState) -> Markup {
    match state {
        FinishedState::Completed => html! { span.badge.badge-completed { "completed" } },
        FinishedState::Cancelled => html! { span.badge.badge-cancelled { "cancelled" } },
    }
}

/// A consumer's text: whole when short, else its start as a summary that
/// opens onto the whole.
pub fn folded(text: &str) -> Markup {
    html! {
        @if text.chars().count() <= FOLD_AT && !text.contains('\n') {
            code.error-text { (text) }
        } @else {
            details.fold {
                summary { code.error-text { (preview(first_line(text), FOLD_AT)) } }
                pre.error-full { (text) }
            }
        }
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// The latest failure reason, prominent; nothing when no failure gave one.
pub fn last_error(m: &MessageRecord) -> Markup {
    html! {
        @if let Some(error) = &m.last_error {
            div.notice.error #message-last-error role="note" {
                p { strong { "Last error" } }
                pre.error-full { (error) }
            }
        }
    }
}

fn outcome(o: AttemptOutcome) -> &'static str {
    match o {
        AttemptOutcome::Acked => "acked",
        AttemptOutcome::Nacked => "nacked",
        AttemptOutcome::LeaseExpired => "lease expired",
        AttemptOutcome::PushFailed => "push failed",
        AttemptOutcome::DeadLettered => "dead-lettered",
        AttemptOutcome::Cancelled => "cancelled",
    }
}

/// The ended hand-outs, newest first (the store keeps them oldest first,
/// at most `onceq_types::attempt::MAX_ATTEMPTS_KEPT`).
pub fn attempts(attempts: &[Attempt], now: jiff::Timestamp) -> Markup {
    html! {
        h2 { "Attempts " span.muted { "(" (attempts.len()) ")" } }
        @if attempts.is_empty() {
            p.muted #attempts-none { "No hand-out has ended yet." }
        } @else {
            div.table-wrap {
                table.data.attempts #attempts {
                    caption.sr-only { "Ended hand-outs of the message, newest first" }
                    thead { tr {
                        th.num scope="col" { "Delivery" }
                        th scope="col" { "Handed out" }
                        th scope="col" { "Ended" }
                        th scope="col" { "Outcome" }
                        th scope="col" { "Error" }
                    } }
                    tbody {
                        @for a in attempts.iter().rev() {
                            tr {
                                th.num scope="row" data-label="Delivery" { (a.delivery_count) }
                                td data-label="Handed out" {
                                    @if let Some(t) = a.consumed_at { (time_rel(t, now)) } @else { span.muted { "—" } }
                                }
                                td data-label="Ended" { (time_rel(a.ended_at, now)) }
                                td data-label="Outcome" { span class=(format!("outcome outcome-{}", a.outcome.as_str())) { (outcome(a.outcome)) } }
                                td.error-cell data-label="Error" {
                                    @if let Some(e) = &a.error { (folded(e)) } @else { span.muted { "—" } }
                                }
                            }
                        }
                    }
                }
            }
            p.hint { "The last " (onceq_types::attempt::MAX_ATTEMPTS_KEPT) " hand-outs are kept with the message." }
        }
    }
}

/// How a finished message ended: when, and a completed one's result.
pub fn ending(f: &Finished, now: jiff::Timestamp, payloads: PayloadGate) -> Markup {
    html! {
        h2 { @match f.state { FinishedState::Completed => "Completed", FinishedState::Cancelled => "Cancelled" } }
        p #message-finished-at {
            @match f.state { FinishedState::Completed => "Acked ", FinishedState::Cancelled => "Cancelled " }
            (time_full(f.finished_at, now)) "."
        }
        @if f.state == FinishedState::Completed {
            @match &f.result {
                Some(result) => {
                    h3 { "Result" }
                    @match payloads.reveal(result) {
                        Some(result) => pre.payload #message-result tabindex="0" aria-label="Result" { code { (pretty(result)) } },
                        None => p #message-result { (withheld()) ": this API key may not read results (it lacks the " code { "peek" } " action)." },
                    }
                }
                None => p.muted #message-result-none { "The ack gave no result." }
            }
        }
    }
}
