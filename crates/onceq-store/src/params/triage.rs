//! Acting on messages from the dashboard beyond browsing: making a delayed
//! message available now, and the bounded search in payloads.

use super::{MessageRecord, QueueRef};
use jiff::Timestamp;

/// The most recent messages one payload search reads at most.
pub const MAX_PAYLOAD_SCAN: u32 = 1000;
/// The most matches one payload search returns.
pub const MAX_PAYLOAD_MATCHES: u32 = 100;

/// `message_promote_now`: a delayed message becomes available at `now`
/// (its delay is cut short), keeping its place (`seq`) in the queue.
#[derive(Debug, Clone)]
pub struct MessagePromote {
    /// Which queue.
    pub queue: QueueRef,
    /// Which message.
    pub message_id: String,
    /// The time of the call: the message's new `visible_at`.
    pub now: Timestamp,
}

/// What `message_promote_now` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromoteOutcome {
    /// It was delayed and is available now.
    Promoted,
    /// The queue holds it, but not delayed: available already (a delay
    /// whose time has come counts as available) or in flight. Unchanged.
    NotDelayed,
    /// The queue holds no such message.
    NotFound,
}

/// `message_payload_search`: the queue's newest `scan` messages (by `seq`,
/// whatever their state) whose payload contains `text`, newest first.
/// Bounded by design: it reads at most `scan` rows of the `(queue, seq)`
/// index backwards, never the whole backlog; an older match is not found.
#[derive(Debug, Clone)]
pub struct PayloadSearch {
    /// Which queue.
    pub queue: QueueRef,
    /// A substring of the stored (canonical, compact JSON) payload,
    /// matched byte for byte (case-sensitive, no patterns).
    pub text: String,
    /// How many of the newest messages to read: 1..=[`MAX_PAYLOAD_SCAN`].
    pub scan: u32,
    /// Matches returned at most: 1..=[`MAX_PAYLOAD_MATCHES`].
    pub limit: u32,
    /// The time of the call (decides which delayed messages are due).
    pub now: Timestamp,
}

/// What `message_payload_search` found.
#[derive(Debug, Clone, PartialEq)]
pub struct PayloadMatches {
    /// The matches, newest first.
    pub messages: Vec<MessageRecord>,
    /// How many messages were read (at most `scan`).
    pub scanned: u32,
    /// True when the queue holds more messages than were read: older
    /// messages were not searched.
    pub truncated: bool,
}

impl PayloadSearch {
    /// Checks the bounds and the text (what both backends refuse alike).
    pub(crate) fn check(&self) -> crate::Result<()> {
        let invalid = |m: String| Err(crate::StoreError::Invalid(m));
        if self.scan == 0 || self.scan > MAX_PAYLOAD_SCAN {
            return invalid(format!(
                "scan must be 1 to {MAX_PAYLOAD_SCAN} (got {})",
                self.scan
            ));
        }
        if self.limit == 0 || self.limit > MAX_PAYLOAD_MATCHES {
            return invalid(format!(
                "limit must be 1 to {MAX_PAYLOAD_MATCHES} (got {})",
                self.limit
            ));
        }
        if self.text.is_empty() {
            return invalid("text must not be empty".into());
        }
        Ok(())
    }
}
