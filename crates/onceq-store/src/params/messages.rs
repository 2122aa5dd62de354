//! Messages: publish, claim, ack, nack, extend, redrive.

use super::QueueRef;
use jiff::SignedDuration;
use jiff::Timestamp;
use onceq_types::MessageStatus;

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
    /// Its headers as a canonical JSON object (string -> string, names
    /// lower-case; the server validates them), `None` when it has none.
    pub headers: Option<String>,
    /// A consumer waits for it: store it handed out to that consumer
    /// (in flight, first delivery, under a lease) where a claim would hand
    /// it out at once, in the same transaction as the publish. See
    /// [`HandOut`].
    pub hand_out: Option<HandOut>,
}

/// A publish's message handed straight to a consumer waiting on its queue
/// (a long poll), saving that consumer a claim of its own: a transaction
/// and a round trip per message when consumers wait on an empty queue.
///
/// Only where a claim made at the publish's `now` would hand it out
/// unconditionally: a new message (not a replay) on a standard queue that
/// is not paused and has no hand-out limits (`max_in_flight`,
/// `rate_per_sec`), with no delay. Anywhere else the message is stored
/// as without it, and its outcome says so ([`PublishOutcome::handed_out`]
/// is `None`); a store may also decline altogether.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HandOut {
    /// The lease's length; `None` means the queue's
    /// `visibility_timeout_default`, as for a claim.
    pub visibility_timeout: Option<SignedDuration>,
}

/// The lease of a message stored handed out ([`HandOut`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandedOut {
    /// Names the lease, as a claim's receipt does.
    pub receipt: String,
    /// When the lease runs out.
    pub lease_expires_at: Timestamp,
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
    /// The `completed_retention_seconds` of the queue, if this publish
    /// creates it (the server's `--completed-retention-seconds`; 0 = none).
    pub new_queue_completed_retention: i32,
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
    /// Stored handed out ([`NewMessage::hand_out`]): in flight under this
    /// lease, its first delivery. The answer's other fields still say what
    /// was published (`available`, `delivery_count` 0), as they would had
    /// a claim taken it a moment later.
    pub handed_out: Option<HandedOut>,
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
    /// Its headers as published (canonical JSON object), if any.
    pub headers: Option<String>,
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
    /// What the work produced (canonical compact JSON, at most
    /// `onceq_types::attempt::MAX_ACK_RESULT_BYTES`), kept with the
    /// message while its queue retains completed messages; else dropped.
    pub result: Option<String>,
    /// The time of the call.
    pub now: Timestamp,
}

/// What `message_publish_acking` did: the publish's answer, and apart
/// from it the answers of the acks it carried, which do not share the
/// publish's fate (a publish refused for its own reason may still have
/// done them).
#[derive(Debug)]
pub struct PublishedAcking {
    /// What `message_publish` would have answered.
    pub published: crate::Result<Vec<PublishOutcome>>,
    /// One answer per carried ack, in order; `None` when they were not done
    /// (or it is not known whether they were: the store timed out): the
    /// caller acks them itself, and an ack done twice answers `false` the
    /// second time, as after any ack answered 503.
    pub acked: Option<Vec<AckOutcome>>,
}

/// What `message_ack` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckOutcome {
    /// The lease was held (and matched the receipt, if given): the message
    /// is gone, or kept as `completed`.
    pub acked: bool,
    /// When the lease that was acked began (`None` when not acked, or for
    /// a lease granted before onceq recorded it): what the metrics time a
    /// run by, without a statement of their own.
    pub consumed_at: Option<Timestamp>,
}

/// Who gives a message back with `message_nack`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NackBy {
    /// A consumer (`POST /v1/queue/nack`): the attempt is `nacked`.
    #[default]
    Consumer,
    /// The push dispatcher, after a failed delivery: `push_failed`.
    Push,
}

/// `message_nack`.
#[derive(Debug, Clone)]
pub struct MessageNack {
    /// The lease.
    pub lease: LeaseRef,
    /// False dead-letters at once.
    pub requeue: bool,
    /// When requeued, held back this long (unless `by_backoff` and the
    /// queue has a retry backoff).
    pub delay: SignedDuration,
    /// True when the caller gave no delay of its own (a nack without
    /// `delay_seconds`, a failed push delivery): a queue's retry backoff
    /// then decides the delay instead of `delay` (`rules::backoff`).
    pub by_backoff: bool,
    /// Why the work failed (at most `onceq_types::attempt::MAX_NACK_ERROR_BYTES`),
    /// recorded in the attempt and as the message's `last_error`.
    pub error: Option<String>,
    /// Who gives it back (decides the attempt's outcome).
    pub by: NackBy,
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

/// `message_cancel`: removes one message of a queue (not of its
/// dead-letter queue), whatever its state; an in-flight one's lease ends.
#[derive(Debug, Clone)]
pub struct MessageCancel {
    /// Which queue.
    pub queue: QueueRef,
    /// Which message.
    pub message_id: String,
    /// The time of the call.
    pub now: Timestamp,
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
