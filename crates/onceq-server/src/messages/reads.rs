//! The rest of what [`Messages`] does: reads (pages, search, one message,
//! kept finished ones), a lease's extension, removals (one message, a
//! purge, the purger's passes). No one else hears of these, so each is the
//! store call alone; they are here so that the service is the one way to
//! messages (see `boundary`).

use onceq_store::{
    ExtendOutcome, FinishedList, FinishedPage, FoundMessage, MessageDelete, MessageExtend,
    MessageGet, MessageList, MessagePage, MessageRecord, PayloadMatches, PayloadSearch, QueueRef,
    Result, SingleOutcome,
};

use super::Messages;

impl Messages<'_> {
    /// One message of a queue.
    pub async fn get(self, p: MessageGet) -> Result<Option<MessageRecord>> {
        self.state.store().message_get(p).await
    }

    /// One message of a queue or of its dead-letter queue, or kept
    /// finished.
    pub async fn find(self, p: MessageGet) -> Result<Option<FoundMessage>> {
        self.state.store().message_find(p).await
    }

    /// One page of a queue's messages.
    pub async fn list(self, p: MessageList) -> Result<MessagePage> {
        self.state.store().message_list(p).await
    }

    /// One page of the finished messages a queue keeps.
    pub async fn finished(self, p: FinishedList) -> Result<FinishedPage> {
        self.state.store().finished_list(p).await
    }

    /// The newest messages whose payload contains a text.
    pub async fn search_payloads(self, p: PayloadSearch) -> Result<PayloadMatches> {
        self.state.store().message_payload_search(p).await
    }

    /// Moves a lease's end (tells no one: nothing became available).
    pub async fn extend(self, p: MessageExtend) -> Result<ExtendOutcome> {
        self.state.store().message_extend(p).await
    }

    /// Deletes one message unless it is in flight.
    pub async fn delete(self, p: MessageDelete) -> Result<SingleOutcome> {
        self.state.store().message_delete(p).await
    }

    /// Deletes every message the queue holds.
    pub async fn purge(self, q: &QueueRef) -> Result<i64> {
        self.state.store().queue_purge(q).await
    }

    /// The purger's pass over messages past their queue's retention.
    pub async fn purge_expired(self, now: jiff::Timestamp) -> Result<u64> {
        self.state.store().message_retention_purge(now).await
    }

    /// Up to `limit` finished messages whose time is up.
    pub async fn purge_finished(self, now: jiff::Timestamp, limit: u32) -> Result<u64> {
        self.state.store().finished_purge(now, limit).await
    }
}
