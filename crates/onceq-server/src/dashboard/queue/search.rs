//! Search in payloads, bounded: a plain substring of the stored payload
//! (canonical compact JSON, case-sensitive) among the queue's newest
//! [`SCAN`] messages, newest first, a page of matches at most. It never
//! reads more than [`SCAN`] rows, however large the backlog; the page says
//! so when older messages were left unsearched.

use maud::{Markup, html};
use onceq_store::{MAX_PAYLOAD_SCAN, MessagePage, PayloadSearch};

use super::{super::error::DashError, super::format::count, super::session::Viewer, PAGE_SIZE};
use crate::AppState;

/// Messages a payload search reads at most: the newest of the queue.
pub const SCAN: u32 = MAX_PAYLOAD_SCAN;

/// How far a payload search read.
#[derive(Debug, Clone, Copy)]
pub struct Bound {
    /// Messages read.
    pub scanned: u32,
    /// The queue holds older messages that were not read.
    pub truncated: bool,
}

/// The matches of `text` among the queue's newest [`SCAN`] messages.
/// Refused (403) to a key that may not read payloads: which messages hold
/// a text tells what they hold.
pub async fn payloads(
    state: &AppState,
    viewer: &Viewer,
    queue: &str,
    text: &str,
) -> Result<(MessagePage, Bound), DashError> {
    viewer.payloads().require().map_err(DashError::Forbidden)?;
    let found = state
        .messages()
        .search_payloads(PayloadSearch {
            queue: viewer.queue(queue)?,
            text: text.to_owned(),
            scan: SCAN,
            limit: PAGE_SIZE,
            now: state.clock.now(),
        })
        .await
        .map_err(|e| DashError::store(e, queue))?;
    let page = MessagePage {
        messages: found.messages,
        next_after_seq: None,
    };
    let bound = Bound {
        scanned: found.scanned,
        truncated: found.truncated,
    };
    Ok((page, bound))
}

/// What the search read, in words, above its results.
pub fn note(bound: &Bound) -> Markup {
    html! {
        p.notice #search-bound {
            "Payload search: a case-sensitive substring of the stored JSON, among the newest "
            strong { (count(i64::from(bound.scanned))) } " messages"
            @if bound.truncated {
                " (the bound is " (count(i64::from(SCAN))) "; older messages were " strong { "not searched" } ")"
            }
            "; matches newest first, " (PAGE_SIZE) " at most."
        }
    }
}
