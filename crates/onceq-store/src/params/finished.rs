//! Listing the finished messages a queue keeps (the dashboard's completed
//! jobs page): newest first, keyset-paged by `(finished_at, id)`.

use jiff::Timestamp;

use super::{Finished, MessageRecord, QueueRef};

/// The most finished messages one `finished_list` page may hold.
pub const MAX_FINISHED_LIMIT: u32 = 200;

/// Where a page of finished messages starts: strictly before (older than)
/// this message, in `(finished_at, id)` order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinishedCursor {
    /// The last listed message's end.
    pub finished_at: Timestamp,
    /// The last listed message's id (orders messages that ended together).
    pub message_id: String,
}

/// `finished_list`: one page of a queue's kept finished messages
/// (completed and cancelled), newest end first. A page is a walk of the
/// `(queue_id, finished_at, id)` index (V14) from the cursor: it costs the
/// same wherever it is, and never reads the queue's backlog.
#[derive(Debug, Clone)]
pub struct FinishedList {
    /// Which queue.
    pub queue: QueueRef,
    /// The previous page's cursor; `None` for the newest page.
    pub before: Option<FinishedCursor>,
    /// 1..=[`MAX_FINISHED_LIMIT`] messages.
    pub limit: u32,
}

/// A finished message, as `message_find` reports one.
#[derive(Debug, Clone, PartialEq)]
pub struct FinishedMessage {
    /// The message (`status` `Gone`, `seq` 0: it is no longer in the queue).
    pub record: MessageRecord,
    /// How and when it ended, and the ack's result.
    pub finished: Finished,
}

/// What `finished_list` returns.
#[derive(Debug, Clone, PartialEq)]
pub struct FinishedPage {
    /// The page, newest end first.
    pub messages: Vec<FinishedMessage>,
    /// The next (older) page's cursor, or `None` when none follows.
    pub next: Option<FinishedCursor>,
}

impl FinishedList {
    /// Checks the limit (what both backends refuse alike); the number of
    /// rows to read: one more than the page, which says whether a next
    /// page exists (never an OFFSET, never a count).
    pub(crate) fn rows_to_read(&self) -> crate::Result<i64> {
        if self.limit == 0 || self.limit > MAX_FINISHED_LIMIT {
            return Err(crate::StoreError::Invalid(format!(
                "limit must be 1 to {MAX_FINISHED_LIMIT} (got {})",
                self.limit
            )));
        }
        Ok(i64::from(self.limit) + 1)
    }
}

impl FinishedPage {
    /// The page of `fetched`, the rows read for a list of `limit`: the
    /// first `limit`, and the next page's cursor when there was one more.
    pub(crate) fn of(mut fetched: Vec<FinishedMessage>, limit: u32) -> Self {
        let next = if fetched.len() > limit as usize {
            fetched.truncate(limit as usize);
            fetched.last().map(|m| FinishedCursor {
                finished_at: m.finished.finished_at,
                message_id: m.record.message_id.clone(),
            })
        } else {
            None
        };
        Self {
            messages: fetched,
            next,
        }
    }
}
