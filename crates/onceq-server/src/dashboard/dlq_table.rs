//! The dead-letter page's table: each dead letter with why it died (its
//! `last_error`, cut to a line; whole on the message page) and how many
//! hand-outs it had, beside its payload and buttons.

use maud::{Markup, html};
use onceq_store::MessageRecord;

use super::{
    bulk,
    format::{dom_id, payload_cell, preview, time_rel, url_part},
};
use crate::payloads::PayloadGate;

/// Characters of an error the list shows.
const ERROR_PREVIEW: usize = 120;

/// The rows, or `empty` when there are none. `queue` is the source queue:
/// ids link to its message page, which finds the dead letter in its DLQ.
pub fn render(
    queue: &str,
    messages: &[MessageRecord],
    now: jiff::Timestamp,
    actions: &dyn Fn(&MessageRecord) -> Markup,
    select: &str,
    payloads: PayloadGate,
) -> Markup {
    html! {
        @if messages.is_empty() {
            div.empty { p { "No dead letters. Messages land here after their last failed hand-out." } }
        } @else {
            div.table-wrap {
                table.data.messages.with-actions #dead-letters {
                    caption.sr-only { "Dead letters of " (queue) ", oldest first" }
                    thead { tr {
                        th scope="col" { span.sr-only { "Select" } }
                        th scope="col" { "Message" }
                        th.num scope="col" { "Deliveries" }
                        th scope="col" { "Last error" }
                        th scope="col" { "Dead-lettered" }
                        th scope="col" { "Payload" }
                        th scope="col" { span.sr-only { "Actions" } }
                    } }
                    tbody {
                        @for m in messages {
                            tr id=(dom_id("row-", &m.message_id)) {
                                td.select-cell { (bulk::checkbox(select, &m.message_id)) }
                                th scope="row" {
                                    a.mono id=(dom_id("msg-", &m.message_id))
                                        href=(format!("/dashboard/queues/{}/messages/{}", url_part(queue), url_part(&m.message_id))) {
                                        (m.message_id)
                                    }
                                }
                                td.num data-label="Deliveries" { (m.delivery_count) }
                                td.error-cell data-label="Last error" id=(dom_id("error-", &m.message_id)) {
                                    @match &m.last_error {
                                        Some(e) => code.error-text title="The whole text is on the message's page" {
                                            (preview(e.lines().next().unwrap_or(""), ERROR_PREVIEW))
                                            @if e.contains('\n') && e.chars().count() <= ERROR_PREVIEW { "…" }
                                        },
                                        None => span.muted { "none given" },
                                    }
                                }
                                td data-label="Dead-lettered" { (time_rel(m.visible_at, now)) }
                                td.preview data-label="Payload" { (payload_cell(payloads, &m.payload, 60)) }
                                td.actions { (actions(m)) }
                            }
                        }
                    }
                }
            }
        }
    }
}
