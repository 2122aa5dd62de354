//! Each endpoint's input, decoded and validated, without I/O.
//!
//! A handler runs its body through [`crate::extract::parse`] (the `Body`
//! extractor does) and then the function here named after the endpoint;
//! only then does it touch the store. The fuzz targets (`fuzz/`) drive the
//! same two steps with arbitrary bytes, so what they cover is exactly what
//! a client can reach. Every failure is a 4xx [`ApiError`] naming the field.
//!
//! A queue's settings are read by `queue_settings`, for `create` and for
//! `update` (`queue_update`) alike; a webhook's registration by `webhooks`;
//! `acks` reads the acks of a batch (`ack_batch`, `consume`'s `acks`);
//! `lifecycle` reads `cancel` and the dead letters a `dlq/redrive` names.

use axum::http::HeaderValue;
use jiff::{SignedDuration, Timestamp};
use onceq_store::NewMessage;
use onceq_types::{
    MAX_BATCH, MAX_DELAY_SECONDS, MAX_VISIBILITY_TIMEOUT_SECONDS, MAX_WAIT_SECONDS,
    queue::QueueSettings,
    request::{
        Ack, BatchItem, Consume, CreateQueue, DeleteQueue, Extend, Nack, Publish, PublishBatch,
    },
};

use crate::{ApiError, validate};

mod acks;
mod lifecycle;
mod queue_settings;
mod queue_update;
mod webhooks;

pub use acks::{AckInput, ack_batch, acks};
pub use lifecycle::{MAX_REDRIVE_IDS, RedriveInput, cancel, redrive};
pub use queue_update::{UpdateInput, update};
pub use webhooks::{WebhookInput, webhook_register};

/// The largest `max_retries` a queue may have.
pub const MAX_RETRIES: i64 = 1000;

/// `publish`: the queue and the message.
#[derive(Debug)]
pub struct PublishInput {
    /// The queue.
    pub queue: String,
    /// The message.
    pub message: NewMessage,
}

/// `publish`; `header_key` is the `Idempotency-Key` header (the body's
/// `idempotency_key` wins).
pub fn publish(req: Publish, header_key: Option<&HeaderValue>) -> Result<PublishInput, ApiError> {
    let queue = validate::required_queue("queue", req.queue)?;
    // The header is checked even when the body's key wins: a malformed
    // header is refused, never silently ignored.
    let header = header_key.map(idempotency_header).transpose()?;
    let own = dedupe_key(At::Top, req.idempotency_key, req.deduplication_id)?;
    let message = new_message(
        At::Top,
        BatchItem {
            payload: req.payload,
            delay_seconds: req.delay_seconds,
            priority: req.priority,
            idempotency_key: own.or(header),
            deduplication_id: None,
            message_group_id: req.message_group_id,
            headers: req.headers,
        },
    )?;
    Ok(PublishInput { queue, message })
}

/// The `Idempotency-Key` header's rule, for publish, publish_batch and the
/// call ledger (`crate::idempotency`) alike: the token rule on visible ASCII.
pub fn idempotency_header(v: &HeaderValue) -> Result<String, ApiError> {
    let bytes = v.as_bytes();
    let hint = "send 1 to 255 characters from ! to ~ (a UUID, say): no spaces, tabs or non-ASCII";
    if bytes.is_empty() || bytes.len() > validate::MAX_TOKEN_BYTES {
        return Err(ApiError::invalid(format!(
            "Idempotency-Key header must be 1 to {} bytes long (got {})",
            validate::MAX_TOKEN_BYTES,
            bytes.len()
        ))
        .with_hint(hint));
    }
    if let Some(at) = bytes.iter().position(|b| !b.is_ascii_graphic()) {
        let what = match bytes[at] {
            b' ' => "a space".to_owned(),
            b if b.is_ascii() => format!("the control character 0x{b:02x}"),
            b => format!("the non-ASCII byte 0x{b:02x}"),
        };
        return Err(ApiError::invalid(format!(
            "Idempotency-Key header must be visible ASCII: it has {what} at byte {at}"
        ))
        .with_hint(hint));
    }
    // Every byte is visible ASCII, so this is the header's text.
    Ok(String::from_utf8_lossy(bytes).into_owned())
}

/// `publish_batch`: the queue and 1..=10 messages.
#[derive(Debug)]
pub struct BatchInput {
    /// The queue.
    pub queue: String,
    /// The messages, in order.
    pub messages: Vec<NewMessage>,
}

/// `publish_batch`; `header_key` is the `Idempotency-Key` header: an item
/// without a key of its own takes `<header key>:<index>` (queue-api-2.md
/// §4), so a retried batch stores nothing twice.
pub fn publish_batch(
    req: PublishBatch,
    max: usize,
    header_key: Option<&HeaderValue>,
) -> Result<BatchInput, ApiError> {
    let header = header_key.map(idempotency_header).transpose()?;
    let queue = validate::required_queue("queue", req.queue)?;
    let items = validate::required("messages", req.messages)?;
    if items.is_empty() || items.len() > max {
        return Err(ApiError::invalid(format!(
            "messages must hold 1 to {max} messages (got {})",
            items.len()
        )));
    }
    let messages = items
        .into_iter()
        .enumerate()
        .map(|(i, mut item)| {
            item.idempotency_key = dedupe_key(
                At::Item(i),
                item.idempotency_key.take(),
                item.deduplication_id.take(),
            )?;
            if let (None, Some(stem)) = (&item.idempotency_key, &header) {
                let derived = format!("{stem}:{i}");
                validate::token(
                    &format!(
                        "messages[{i}]'s key from the Idempotency-Key header ({stem:?} + \":{i}\")"
                    ),
                    &derived,
                )?;
                item.idempotency_key = Some(derived);
            }
            new_message(At::Item(i), item)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(BatchInput { queue, messages })
}

/// A message's own dedupe key: `idempotency_key`, or its other name
/// `deduplication_id` (queue-api-2.md §2); both, and different, is 400
/// naming both.
fn dedupe_key(
    at: At,
    idempotency_key: Option<String>,
    deduplication_id: Option<String>,
) -> Result<Option<String>, ApiError> {
    match (idempotency_key, deduplication_id) {
        (Some(a), Some(b)) if a != b => Err(ApiError::invalid(format!(
            "{} and {} are two names of one key and they differ ({a:?}, {b:?}); give one",
            at.field("idempotency_key"),
            at.field("deduplication_id")
        ))),
        (Some(a), _) => Ok(Some(a)),
        (None, b) => validate::opt_token(at.field("deduplication_id"), b),
    }
}

/// Where a message's fields sit in its request, for the errors that name
/// them: at the top of a publish (`payload`), or in item `i` of a batch
/// (`messages[3].payload`).
#[derive(Debug, Clone, Copy)]
enum At {
    Top,
    Item(usize),
}

impl At {
    fn field(self, name: &'static str) -> Named {
        Named(self, name)
    }
}

/// Field `name` of a message, formatted only when an error names it (no
/// string per field of every message checked).
#[derive(Debug, Clone, Copy)]
struct Named(At, &'static str);

impl std::fmt::Display for Named {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            At::Top => f.write_str(self.1),
            At::Item(i) => write!(f, "messages[{i}].{}", self.1),
        }
    }
}

fn new_message(at: At, item: BatchItem) -> Result<NewMessage, ApiError> {
    let field = |name| at.field(name);
    let payload = validate::payload(field("payload"), item.payload)?;
    let headers = crate::headers::parse(field("headers"), item.headers)?;
    crate::headers::check_size(field(""), &payload, headers.as_deref())?;
    let delay = validate::int_in(
        field("delay_seconds"),
        item.delay_seconds,
        0,
        MAX_DELAY_SECONDS,
        0,
    )?;
    let priority = validate::int_in(
        field("priority"),
        item.priority,
        i32::MIN.into(),
        i32::MAX.into(),
        0,
    )?;
    Ok(NewMessage {
        payload,
        delay: SignedDuration::from_secs(delay),
        priority: priority as i32,
        idempotency_key: validate::opt_token(field("idempotency_key"), item.idempotency_key)?,
        group_id: validate::opt_token(field("message_group_id"), item.message_group_id)?,
        headers,
        hand_out: None,
    })
}

/// `consume`.
#[derive(Debug)]
pub struct ConsumeInput {
    /// The queue.
    pub queue: String,
    /// 1..=10.
    pub max: u32,
    /// The lease length, if not the queue's default.
    pub visibility_timeout: Option<SignedDuration>,
    /// Long-poll seconds, 0..=20.
    pub wait_seconds: u64,
    /// The previous batch's acks, applied before the claim.
    pub acks: Vec<AckInput>,
}

/// `consume`.
pub fn consume(req: Consume) -> Result<ConsumeInput, ApiError> {
    let queue = validate::required_queue("queue", req.queue)?;
    let max = validate::int_in("max_messages", req.max_messages, 1, MAX_BATCH as i64, 1)?;
    let visibility = req
        .visibility_timeout
        .map(|v| {
            validate::int_in(
                "visibility_timeout",
                Some(v),
                0,
                MAX_VISIBILITY_TIMEOUT_SECONDS,
                0,
            )
        })
        .transpose()?;
    let wait = validate::int_in("wait_seconds", req.wait_seconds, 0, MAX_WAIT_SECONDS, 0)?;
    let acks = acks::acks("acks", req.acks.unwrap_or_default())?;
    Ok(ConsumeInput {
        acks,
        queue,
        max: max as u32,
        visibility_timeout: visibility.map(SignedDuration::from_secs),
        wait_seconds: wait as u64,
    })
}

/// A message lease named by `ack`, `nack` or `extend`.
#[derive(Debug)]
pub struct LeaseInput {
    /// The queue.
    pub queue: String,
    /// The message.
    pub message_id: String,
    /// The lease's receipt, if given.
    pub receipt: Option<String>,
}

fn lease(
    queue: Option<String>,
    message_id: Option<String>,
    receipt: Option<String>,
) -> Result<LeaseInput, ApiError> {
    Ok(LeaseInput {
        queue: validate::required_queue("queue", queue)?,
        message_id: validate::required_token("message_id", message_id)?,
        receipt: validate::opt_token("receipt", receipt)?,
    })
}

/// `ack`: the lease, and the `result` to keep (compact JSON).
pub fn ack(req: Ack) -> Result<(LeaseInput, Option<String>), ApiError> {
    let result = validate::ack_result("result", req.result)?;
    Ok((lease(req.queue, req.message_id, req.receipt)?, result))
}

/// `nack`.
#[derive(Debug)]
pub struct NackInput {
    /// The lease.
    pub lease: LeaseInput,
    /// Back to the queue (true) or to the DLQ.
    pub requeue: bool,
    /// Held back this long, in seconds.
    pub delay_seconds: i64,
    /// No `delay_seconds` given: the queue's retry backoff, if it has one,
    /// decides the delay.
    pub by_backoff: bool,
    /// Why the work failed: recorded in the attempt and as `last_error`.
    pub error: Option<String>,
}

/// The longest failure text a nack may carry, in bytes (the one rule, in
/// `onceq_types::attempt`).
pub use onceq_types::attempt::MAX_NACK_ERROR_BYTES;

/// `nack`.
pub fn nack(req: Nack) -> Result<NackInput, ApiError> {
    let lease = lease(req.queue, req.message_id, req.receipt)?;
    let delay = validate::int_in("delay_seconds", req.delay_seconds, 0, MAX_DELAY_SECONDS, 0)?;
    if let Some(error) = &req.error
        && error.len() > MAX_NACK_ERROR_BYTES
    {
        return Err(ApiError::invalid(format!(
            "error must be at most {MAX_NACK_ERROR_BYTES} bytes (got {})",
            error.len()
        ))
        .with_hint("send the first lines of the failure; keep the full trace in your logs"));
    }
    Ok(NackInput {
        lease,
        requeue: req.requeue.unwrap_or(true),
        delay_seconds: delay,
        by_backoff: req.delay_seconds.is_none(),
        error: req.error,
    })
}

/// `extend`.
#[derive(Debug)]
pub struct ExtendInput {
    /// The lease.
    pub lease: LeaseInput,
    /// The new lease, from now.
    pub visibility_timeout: SignedDuration,
}

/// `extend`.
pub fn extend(req: Extend) -> Result<ExtendInput, ApiError> {
    let lease = lease(req.queue, req.message_id, req.receipt)?;
    let timeout = validate::int_in(
        "visibility_timeout",
        Some(validate::required(
            "visibility_timeout",
            req.visibility_timeout,
        )?),
        0,
        MAX_VISIBILITY_TIMEOUT_SECONDS,
        0,
    )?;
    Ok(ExtendInput {
        lease,
        visibility_timeout: SignedDuration::from_secs(timeout),
    })
}

/// `create`.
#[derive(Debug)]
pub struct CreateInput {
    /// The new queue's name.
    pub name: String,
    /// Its settings.
    pub settings: QueueSettings,
}

/// `create`; `default_completed_retention` is the server's
/// `--completed-retention-seconds`, for a create that gives none.
pub fn create(req: CreateQueue, default_completed_retention: i32) -> Result<CreateInput, ApiError> {
    let name = validate::required("name", req.name)?;
    validate::new_queue_name("name", &name)?;
    // `fifo`: strict order within a message group (docs/api.md, "FIFO
    // queues"); its default `<name>-dlq` is created standard.
    let queue_type = req.queue_type.unwrap_or_default();
    let dead_letter_queue = queue_settings::dead_letter_queue(&name, req.dead_letter_queue)?;
    let defaults = QueueSettings::default();
    let settings = QueueSettings {
        queue_type,
        dead_letter_queue,
        max_retries: queue_settings::max_retries(req.max_retries)?.unwrap_or(defaults.max_retries),
        message_retention_days: queue_settings::message_retention_days(req.message_retention_days)?
            .unwrap_or(defaults.message_retention_days),
        visibility_timeout_default: queue_settings::visibility_timeout_default(
            req.visibility_timeout_default,
        )?
        .unwrap_or(defaults.visibility_timeout_default),
        enable_priority: req.enable_priority.unwrap_or(defaults.enable_priority),
        retry_backoff: req
            .retry_backoff
            .map(queue_settings::retry_backoff)
            .transpose()?,
        max_in_flight: queue_settings::max_in_flight(req.max_in_flight)?,
        rate_per_sec: queue_settings::rate_per_sec(req.rate_per_sec)?,
        completed_retention_seconds: queue_settings::completed_retention_seconds(
            req.completed_retention_seconds,
        )?
        .unwrap_or(default_completed_retention),
    };
    Ok(CreateInput { name, settings })
}

/// `delete` (body form): the queue.
pub fn delete(req: DeleteQueue) -> Result<String, ApiError> {
    validate::required_queue("queue", req.queue)
}

/// `account/usage`'s `from` and `to` query parameters (RFC 3339):
/// `from` defaults to the Unix epoch, `to` to the end of the current
/// minute; `from` must not be after `to`.
pub fn usage_range(
    from: Option<&str>,
    to: Option<&str>,
    now: Timestamp,
) -> Result<(Timestamp, Timestamp), ApiError> {
    let parse = |field: &str, v: &str| validate::timestamp(field, v, "2026-07-01T00:00:00Z");
    let from = match from {
        Some(v) => parse("from", v)?,
        None => Timestamp::UNIX_EPOCH,
    };
    let to = match to {
        Some(v) => parse("to", v)?,
        None => {
            let minute = crate::accounts::ledger::minute_of(now);
            Timestamp::from_second(minute + 60).unwrap_or(Timestamp::MAX)
        }
    };
    if from > to {
        return Err(ApiError::invalid(format!(
            "from ({from}) must not be after to ({to})"
        )));
    }
    Ok((from, to))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_range_defaults_and_refusals() {
        let now: Timestamp = "2026-07-26T12:00:30Z".parse().unwrap();
        let (from, to) = usage_range(None, None, now).unwrap();
        assert_eq!(from, Timestamp::UNIX_EPOCH);
        assert_eq!(to, "2026-07-26T12:01:00Z".parse().unwrap());
        assert!(usage_range(Some("yesterday"), None, now).is_err());
        assert!(
            usage_range(
                Some("2026-07-27T00:00:00Z"),
                Some("2026-07-26T00:00:00Z"),
                now
            )
            .is_err()
        );
        assert!(usage_range(None, Some("99999-01-01T00:00:00Z"), now).is_err());
    }
}
