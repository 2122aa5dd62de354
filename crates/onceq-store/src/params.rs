//! One params struct per store operation, and what each returns.
//!
//! Every struct carries `now`: the store never reads a clock of its own.

use jiff::{SignedDuration, Timestamp};
use onceq_types::{MessageStatus, QueueRecord, queue::QueueSettings, scope::KeyScope};

/// Names a queue inside a project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueRef {
    /// The owning project.
    pub project: String,
    /// The queue's name.
    pub queue: String,
}

impl QueueRef {
    /// Shorthand constructor.
    pub fn new(project: impl Into<String>, queue: impl Into<String>) -> Self {
        Self {
            project: project.into(),
            queue: queue.into(),
        }
    }
}

// ---------------------------------------------------------------- keys

/// `key_insert`: store a new API key (its hash only) for a project, creating
/// the project if needed.
#[derive(Debug, Clone)]
pub struct KeyInsert {
    /// The project the key belongs to.
    pub project: String,
    /// Public, non-secret id of the key (shown in listings, used to revoke).
    pub key_id: String,
    /// SHA-256 of the whole secret key.
    pub key_hash: Vec<u8>,
    /// Free text for operators.
    pub label: Option<String>,
    /// What the key may do (default: everything).
    pub scope: KeyScope,
    /// When the key stops authenticating by itself (`None`: never).
    pub expires_at: Option<Timestamp>,
    /// The time of the call.
    pub now: Timestamp,
}

/// An API key as stored (never the secret).
#[derive(Debug, Clone, PartialEq)]
pub struct KeyRecord {
    /// Public id.
    pub key_id: String,
    /// Owning project.
    pub project: String,
    /// Free text.
    pub label: Option<String>,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it was revoked; revoked keys never authenticate.
    pub revoked_at: Option<Timestamp>,
    /// What the key may do.
    pub scope: KeyScope,
    /// When it stops authenticating; the server compares it with its clock.
    pub expires_at: Option<Timestamp>,
    /// Its own rate limit, overriding the server's per-key default.
    pub rate: Option<crate::RateLimit>,
}

// ---------------------------------------------------------------- queues

/// `queue_create`.
#[derive(Debug, Clone)]
pub struct QueueCreate {
    /// Project and name.
    pub queue: QueueRef,
    /// The settings; `dead_letter_queue: None` means `<name>-dlq`, created
    /// along with the queue if missing.
    pub settings: QueueSettings,
    /// The time of the call.
    pub now: Timestamp,
}

/// What `queue_create` did.
#[derive(Debug, Clone)]
pub struct QueueCreated {
    /// The queue as stored.
    pub record: QueueRecord,
    /// False when an identical queue already existed.
    pub created: bool,
}

// ---------------------------------------------------------------- messages

/// The group of a message published to a FIFO queue without one.
pub const DEFAULT_GROUP: &str = "default";

/// One message to publish.
#[derive(Debug, Clone)]
pub struct NewMessage {
    /// Canonical compact JSON (see `onceq_types::MAX_PAYLOAD_BYTES`).
    pub payload: String,
    /// Held back this long before it can be consumed (0 = available now).
    pub delay: SignedDuration,
    /// Higher goes out first. Stored as 0 when the queue has
    /// `enable_priority: false`.
    pub priority: i32,
    /// Dedupes publishes within the window.
    pub idempotency_key: Option<String>,
    /// The message group. On a FIFO queue it decides the order (see the
    /// `store` module docs); `None` there means [`DEFAULT_GROUP`]. On a
    /// standard queue it is stored as given and has no effect.
    pub group_id: Option<String>,
}

/// `message_publish`: stores all messages or none, creating the queue (and
/// its `<name>-dlq`) with default settings if it does not exist.
#[derive(Debug, Clone)]
pub struct MessagePublish {
    /// Where to.
    pub queue: QueueRef,
    /// 1..=10 messages.
    pub messages: Vec<NewMessage>,
    /// How long an idempotency key is remembered from its first publish.
    pub dedupe_window: SignedDuration,
    /// The time of the call.
    pub now: Timestamp,
}

/// The outcome of one published message.
#[derive(Debug, Clone, PartialEq)]
pub struct PublishOutcome {
    /// The new id, or the first one on a replay.
    pub message_id: String,
    /// The payload (the caller's; identical to the first on a replay).
    pub payload: String,
    /// `available`/`delayed` when new; on a replay the first message's
    /// current state, or `gone` if it is no longer held.
    pub status: MessageStatus,
    /// 0 when new; on a replay the first message's current count (0 if gone).
    pub delivery_count: i32,
    /// When the (first) message was stored.
    pub created_at: Timestamp,
    /// True when answered from the idempotency key.
    pub replay: bool,
}

/// `message_claim`: hand out up to `max` available messages under a lease
/// (on a FIFO queue, only groups' heads: see the `store` module docs).
#[derive(Debug, Clone)]
pub struct MessageClaim {
    /// From where.
    pub queue: QueueRef,
    /// 1..=10.
    pub max: u32,
    /// Lease length; `None` means the queue's `visibility_timeout_default`.
    pub visibility_timeout: Option<SignedDuration>,
    /// The time of the call.
    pub now: Timestamp,
}

/// A message handed out by `message_claim`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimedMessage {
    /// Its id.
    pub message_id: String,
    /// Canonical payload.
    pub payload: String,
    /// Hand-outs including this one.
    pub delivery_count: i32,
    /// Names this lease.
    pub receipt: String,
    /// When it was published.
    pub created_at: Timestamp,
    /// When this lease runs out.
    pub lease_expires_at: Timestamp,
    /// The key it was published with, if any.
    pub idempotency_key: Option<String>,
}

/// Names one lease: `receipt: None` matches whoever holds the message.
#[derive(Debug, Clone)]
pub struct LeaseRef {
    /// Which queue.
    pub queue: QueueRef,
    /// Which message.
    pub message_id: String,
    /// The lease's receipt, if the caller gave it.
    pub receipt: Option<String>,
}

/// `message_ack`.
#[derive(Debug, Clone)]
pub struct MessageAck {
    /// The lease.
    pub lease: LeaseRef,
    /// The time of the call.
    pub now: Timestamp,
}

/// `message_nack`.
#[derive(Debug, Clone)]
pub struct MessageNack {
    /// The lease.
    pub lease: LeaseRef,
    /// False dead-letters at once.
    pub requeue: bool,
    /// When requeued, held back this long.
    pub delay: SignedDuration,
    /// The time of the call.
    pub now: Timestamp,
}

/// What `message_nack` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NackOutcome {
    /// The lease was held (and matched the receipt, if given).
    pub nacked: bool,
    /// The message went back to its queue.
    pub requeued: bool,
    /// The message went to the dead-letter queue.
    pub dead_lettered: bool,
    /// Its hand-outs so far (0 if the message is unknown).
    pub delivery_count: i32,
}

/// `message_extend`.
#[derive(Debug, Clone)]
pub struct MessageExtend {
    /// The lease.
    pub lease: LeaseRef,
    /// New lease length counted from `now`.
    pub visibility_timeout: SignedDuration,
    /// The time of the call.
    pub now: Timestamp,
}

/// What `message_extend` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExtendOutcome {
    /// The lease was held and now ends at `lease_expires_at`.
    pub extended: bool,
    /// The lease's end, if the message is in flight.
    pub lease_expires_at: Option<Timestamp>,
}

/// `dlq_redrive`.
#[derive(Debug, Clone)]
pub struct DlqRedrive {
    /// The source queue whose DLQ is drained back into it.
    pub queue: QueueRef,
    /// At most this many; `None` = all.
    pub max: Option<i64>,
    /// The time of the call.
    pub now: Timestamp,
}

/// What `dlq_redrive` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedriveOutcome {
    /// The DLQ's name.
    pub dead_letter_queue: String,
    /// Messages moved back.
    pub redriven: i64,
}

// ---------------------------------------------------------------- maintenance

/// What one `lease_expire` pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LeaseExpiry {
    /// Expired leases returned to their queue.
    pub requeued: u64,
    /// Expired leases that were the message's last allowed hand-out.
    pub dead_lettered: u64,
    /// The same counts split by the queue the leases were on (the source
    /// queue, not the DLQ), ordered by project then name. Only queues with
    /// an expiry appear. Feeds the per-queue metrics.
    pub by_queue: Vec<QueueLeaseExpiry>,
}

/// The expired leases of one queue in a `lease_expire` pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueLeaseExpiry {
    /// The queue the leases were on.
    pub queue: QueueRef,
    /// Returned to it.
    pub requeued: u64,
    /// Moved to its dead-letter queue.
    pub dead_lettered: u64,
}

impl LeaseExpiry {
    /// Totals and per-queue counts from one entry per queue, in any order.
    pub(crate) fn from_queues(mut by_queue: Vec<QueueLeaseExpiry>) -> Self {
        by_queue.sort_by(|a, b| {
            (&a.queue.project, &a.queue.queue).cmp(&(&b.queue.project, &b.queue.queue))
        });
        Self {
            requeued: by_queue.iter().map(|q| q.requeued).sum(),
            dead_lettered: by_queue.iter().map(|q| q.dead_lettered).sum(),
            by_queue,
        }
    }
}

// ---------------------------------------------------------------- observation

/// How many messages one queue holds, by state: what `/metrics` exports as
/// gauges (`queue_depths`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueDepth {
    /// The queue.
    pub queue: QueueRef,
    /// Ready now (due delayed messages included, as in `QueueStats`).
    pub available: i64,
    /// Waiting for their delay.
    pub delayed: i64,
    /// Under a lease.
    pub in_flight: i64,
    /// Held by its dead-letter queue (0 without one).
    pub dead_lettered: i64,
    /// When the first message it holds in publish order (lowest `seq`) was
    /// stored; `None` when empty. The same as the oldest `created_at` except
    /// after a redrive into a FIFO queue, which appends old messages at
    /// their group's tail.
    pub oldest_created_at: Option<Timestamp>,
}

/// A connection pool's use at one moment (`Store::pool_stats`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolStats {
    /// Which pool: `postgres`, `sqlite_readers` or `sqlite_writer`.
    pub pool: &'static str,
    /// The most connections it may hold (`None`: opened on demand, no cap).
    pub max_size: Option<usize>,
    /// Connections open now.
    pub size: usize,
    /// Open and idle.
    pub available: usize,
    /// Callers waiting for a connection (for the SQLite writer: requests
    /// queued for its thread).
    pub waiting: usize,
}

// ---------------------------------------------------------------- browsing

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
    /// Hand-outs so far (reset to 0 by a redrive).
    pub delivery_count: i32,
    /// When it was published.
    pub created_at: Timestamp,
    /// When it became (or becomes) available: its publish time, the end of
    /// its delay, or the time of its last requeue or redrive.
    pub visible_at: Timestamp,
    /// The end of its lease while in flight.
    pub lease_expires_at: Option<Timestamp>,
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

// ---------------------------------------------------------------- push subscriptions

/// `subscription_insert`: a push subscription on an existing queue.
#[derive(Debug, Clone)]
pub struct SubscriptionInsert {
    /// The queue whose messages it receives; it must exist.
    pub queue: QueueRef,
    /// Where deliveries are POSTed (already checked by the caller).
    pub url: String,
    /// The HMAC key deliveries are signed with. Stored as given: signing
    /// needs the key itself, so unlike an API key it cannot be kept hashed.
    pub secret: String,
    /// Deliveries in flight at once, 1..=100.
    pub max_in_flight: i32,
    /// Seconds a delivery may take, 1..=300.
    pub timeout_seconds: i32,
    /// The time of the call.
    pub now: Timestamp,
}

/// A push subscription as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubscriptionRecord {
    /// `psub_` and 32 hex digits.
    pub subscription_id: String,
    /// Project and name of its queue.
    pub queue: QueueRef,
    /// Where deliveries are POSTed.
    pub url: String,
    /// The signing key.
    pub secret: String,
    /// Deliveries in flight at once.
    pub max_in_flight: i32,
    /// Seconds a delivery may take.
    pub timeout_seconds: i32,
    /// When it was created.
    pub created_at: Timestamp,
}

/// `subscription_delete`.
#[derive(Debug, Clone)]
pub struct SubscriptionDelete {
    /// Its queue, which must exist.
    pub queue: QueueRef,
    /// Which subscription.
    pub subscription_id: String,
}

/// One row of `subscription_scan`: a subscription, and whether its queue
/// has a message to hand out now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubscriptionDue {
    /// The subscription.
    pub subscription: SubscriptionRecord,
    /// Its queue holds a message that is available, or delayed with its
    /// time come. (On a FIFO queue that message may sit behind its group's
    /// head, so a claim may still find nothing.)
    pub due: bool,
}
