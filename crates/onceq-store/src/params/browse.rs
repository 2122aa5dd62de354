//! Browsing a queue (the dashboard).

use super::QueueRef;
use jiff::Timestamp;
use onceq_types::MessageStatus;

/// The most messages one `message_list` page may hold.
pub const MAX_LIST_LIMIT: u32 = 500;

/// `message_list`: one page of a queue's messages in publish order (`seq`
/// ascending), keyset-paged: the next page starts after the last `seq` seen,
/// so a page costs the same wherever it is in the backlog.
#[derive(Debug, Clone)]
pub struct MessageList {
    /// Which queue.
    pub queue: QueueRef,
    /// Only messages in this state, counted as `queue_stats` counts them (a
    /// delayed message whose time has come is available). `Gone` is
    /// `Invalid`: the store holds no gone messages.
    pub state: Option<MessageStatus>,
    /// Only the message with this id, or the messages published with this
    /// idempotency key (exact match, found through indexes).
    pub search: Option<String>,
    /// Only messages of this message group (exact match; the
    /// `(queue, group_id, seq)` index of V2 can answer it).
    pub group_id: Option<String>,
    /// Only messages with a `seq` above this (the previous page's cursor).
    pub after_seq: Option<i64>,
    /// 1..=[`MAX_LIST_LIMIT`] messages.
    pub limit: u32,
    /// The time of the call (decides which delayed messages are due).
    pub now: Timestamp,
}

/// What `message_list` returns.
#[derive(Debug, Clone, PartialEq)]
pub struct MessagePage {
    /// The page, oldest first.
    pub messages: Vec<MessageRecord>,
    /// The cursor of the next page (`after_seq`), or `None` when no message
    /// follows this page.
    pub next_after_seq: Option<i64>,
}

/// A message as the store holds it (never its lease receipt).
#[derive(Debug, Clone, PartialEq)]
pub struct MessageRecord {
    /// Position in publish order within the whole store; the paging cursor.
    pub seq: i64,
    /// Its id.
    pub message_id: String,
    /// Canonical compact JSON.
    pub payload: String,
    /// `available`, `delayed` or `in_flight`, as `queue_stats` counts it.
    pub status: MessageStatus,
    /// As stored (0 where the queue ignores priority).
    pub priority: i32,
    /// Its message group, if any.
    pub group_id: Option<String>,
    /// The key it was published with, if any.
    pub idempotency_key: Option<String>,
    /// Its headers as published (canonical JSON object), if any.
    pub headers: Option<String>,
    /// Hand-outs so far (reset to 0 by a redrive).
    pub delivery_count: i32,
    /// When it was published.
    pub created_at: Timestamp,
    /// When it became (or becomes) available: its publish time, the end of
    /// its delay, or the time of its last requeue or redrive.
    pub visible_at: Timestamp,
    /// The end of its lease while in flight.
    pub lease_expires_at: Option<Timestamp>,
    /// The latest error text a failed hand-out gave, if any.
    pub last_error: Option<String>,
    /// Its last ended hand-outs, oldest first (see `rules::attempts`).
    pub attempts: Vec<onceq_types::Attempt>,
}

/// `message_get`: one message of a queue, whatever its state.
#[derive(Debug, Clone)]
pub struct MessageGet {
    /// Which queue.
    pub queue: QueueRef,
    /// Which message.
    pub message_id: String,
    /// The time of the call.
    pub now: Timestamp,
}

/// What `message_find` found.
#[derive(Debug, Clone, PartialEq)]
pub struct FoundMessage {
    /// The message (its `status` as its holder counts it).
    pub record: MessageRecord,
    /// True when the queue's dead-letter queue holds it.
    pub dead_lettered: bool,
    /// Set when the message is finished and kept by its queue (its
    /// `record.status` is then `Gone`: it is no longer in the queue).
    pub finished: Option<Finished>,
}

/// How a message kept after its end finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishedState {
    /// Acked.
    Completed,
    /// Cancelled.
    Cancelled,
}

impl FinishedState {
    /// The stored name (`onceq_finished.state`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Cancelled => "cancelled",
        }
    }

    /// Parses a stored name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "completed" => Some(Self::Completed),
            "cancelled" => Some(Self::Cancelled),
            _ => None,
        }
    }
}

/// A finished message's end.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    /// Acked or cancelled.
    pub state: FinishedState,
    /// When.
    pub finished_at: Timestamp,
    /// What the ack gave as `result` (canonical JSON), if anything.
    pub result: Option<String>,
}

/// What an operation on one named message did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SingleOutcome {
    /// It was carried out.
    Done,
    /// The message is in flight: its holder keeps it, nothing changed.
    InFlight,
    /// The queue holds no such message.
    NotFound,
}

/// `message_delete`: deletes one message of a queue unless it is in flight
/// (e.g. a dead letter nobody should retry).
#[derive(Debug, Clone)]
pub struct MessageDelete {
    /// Which queue.
    pub queue: QueueRef,
    /// Which message.
    pub message_id: String,
    /// The time of the call.
    pub now: Timestamp,
}

/// `dlq_redrive_one`: moves one dead letter back, as `dlq_redrive` moves
/// them all.
#[derive(Debug, Clone)]
pub struct DlqRedriveOne {
    /// The source queue, whose dead-letter queue holds the message.
    pub queue: QueueRef,
    /// The dead letter.
    pub message_id: String,
    /// The time of the call.
    pub now: Timestamp,
}

/// What `dlq_redrive_one` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedriveOneOutcome {
    /// The DLQ's name.
    pub dead_letter_queue: String,
    /// `Done` when the message moved back.
    pub outcome: SingleOutcome,
}

impl MessageList {
    /// Checks the limit and the state filter (what both backends refuse
    /// alike); the state filter's stored name.
    pub(crate) fn checked_state(&self) -> crate::Result<Option<&'static str>> {
        if self.limit == 0 || self.limit > MAX_LIST_LIMIT {
            return Err(crate::StoreError::Invalid(format!(
                "limit must be 1 to {MAX_LIST_LIMIT} (got {})",
                self.limit
            )));
        }
        match self.state {
            Some(MessageStatus::Gone) => Err(crate::StoreError::Invalid(
                "state must be available, delayed or in_flight: the store holds no gone messages"
                    .into(),
            )),
            state => Ok(state.map(MessageStatus::as_str)),
        }
    }
}
