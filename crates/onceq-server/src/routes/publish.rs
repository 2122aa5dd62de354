//! `publish` and `publish_batch`.

use axum::{extract::State, http::HeaderMap};
use jiff::SignedDuration;
use onceq_store::{MessagePublish, NewMessage, PublishOutcome, QueueRef};
use onceq_types::{
    MAX_DELAY_SECONDS, MessageStatus, PublishedMessage,
    reply::Items,
    request::{BatchItem, Publish, PublishBatch},
};
use serde_json::value::RawValue;

use crate::{
    ApiError, AppState,
    auth::Caller,
    envelope::Reply,
    extract::Body,
    openapi::responses::{
        InvalidParams, KeyReused, Ok, OkList, StoreFailed, TooLarge, Unauthorized,
    },
    validate,
};

/// `POST /v1/queue/publish`.
#[utoipa::path(
    post,
    path = "/v1/queue/publish",
    tag = "messages",
    summary = "Publish one message",
    description = "Stores a message, creating the queue (and its <name>-dlq) with default settings if it does not exist. With an idempotency key (the body's, else the Idempotency-Key header), a second publish within the dedupe window stores nothing and answers the first message (metadata.idempotent_replay: true).",
    params((
        "Idempotency-Key" = Option<String>,
        Header,
        description = "Used when the body has no idempotency_key: 1 to 255 characters of printable ASCII.",
        min_length = 1,
        max_length = 255,
        pattern = "^[!-~]([ -~]*[!-~])?$"
    )),
    request_body = Publish,
    responses(Ok<PublishedMessage>, InvalidParams, Unauthorized, TooLarge, KeyReused, StoreFailed)
)]
pub async fn publish(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Body(req): Body<Publish>,
) -> Result<Reply<PublishedMessage>, ApiError> {
    let queue = validate::required_queue("queue", req.queue)?;
    // The header is checked even when the body's key wins: a malformed
    // header is refused, never silently ignored.
    let header = header_key(&headers)?;
    let key = req.idempotency_key.or(header);
    let message = new_message(
        "",
        BatchItem {
            payload: req.payload,
            delay_seconds: req.delay_seconds,
            priority: req.priority,
            idempotency_key: key,
            message_group_id: req.message_group_id,
        },
    )?;
    let mut outcomes = store_messages(&state, &caller, &queue, vec![message]).await?;
    let outcome = outcomes
        .pop()
        .ok_or_else(|| ApiError::invalid("nothing published"))?;
    let cost = if outcome.replay {
        0.0
    } else {
        state.config.prices.cost("queue.publish", 1)
    };
    let replay = outcome.replay;
    Ok(Reply::new(published(&queue, outcome, false)?)
        .cost(cost)
        .replay(replay))
}

/// `POST /v1/queue/publish_batch`: 1..=10 messages (or the configured
/// `max_batch`), stored all or none.
#[utoipa::path(
    post,
    path = "/v1/queue/publish_batch",
    tag = "messages",
    summary = "Publish 1 to 10 messages, all or none",
    description = "Stores every message or none. Each item may carry its own idempotency key; each answer item says whether it was a replay, and metadata.idempotent_replay is true only when every item was. The contract's limit is 10 messages; a server started with --max-batch accepts up to that many instead.",
    request_body = PublishBatch,
    responses(OkList<PublishedMessage>, InvalidParams, Unauthorized, TooLarge, KeyReused, StoreFailed)
)]
pub async fn publish_batch(
    State(state): State<AppState>,
    caller: Caller,
    Body(req): Body<PublishBatch>,
) -> Result<Reply<Items<PublishedMessage>>, ApiError> {
    let queue = validate::required_queue("queue", req.queue)?;
    let items = validate::required("messages", req.messages)?;
    let max = state.config.max_batch;
    if items.is_empty() || items.len() > max {
        return Err(ApiError::invalid(format!(
            "messages must hold 1 to {max} messages (got {})",
            items.len()
        )));
    }
    let messages = items
        .into_iter()
        .enumerate()
        .map(|(i, item)| new_message(&format!("messages[{i}]."), item))
        .collect::<Result<Vec<_>, _>>()?;
    let outcomes = store_messages(&state, &caller, &queue, messages).await?;
    let fresh = outcomes.iter().filter(|o| !o.replay).count();
    let all_replayed = fresh == 0;
    let items = outcomes
        .into_iter()
        .map(|o| published(&queue, o, true))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Reply::new(Items { items })
        .cost(state.config.prices.cost("queue.publish_batch", fresh))
        .replay(all_replayed))
}

async fn store_messages(
    state: &AppState,
    caller: &Caller,
    queue: &str,
    messages: Vec<NewMessage>,
) -> Result<Vec<PublishOutcome>, ApiError> {
    let dedupe_window = SignedDuration::try_from(state.config.dedupe_window)
        .map_err(|_| ApiError::invalid("dedupe window out of range"))?;
    let outcomes = state
        .store
        .message_publish(MessagePublish {
            queue: QueueRef::new(&caller.project, queue),
            messages,
            dedupe_window,
            now: state.clock.now(),
        })
        .await
        .map_err(|e| ApiError::from_store(e, queue))?;
    state.metrics.published(&caller.project, queue, &outcomes);
    if outcomes
        .iter()
        .any(|o| !o.replay && o.status == MessageStatus::Available)
    {
        state.wakeups.wake(&caller.project, queue);
    }
    state.throughput.published(
        &caller.project,
        queue,
        state.clock.now(),
        outcomes.iter().filter(|o| !o.replay).count() as u64,
    );
    Ok(outcomes)
}

fn new_message(prefix: &str, item: BatchItem) -> Result<NewMessage, ApiError> {
    let field = |name: &str| format!("{prefix}{name}");
    let payload = validate::payload(&field("payload"), item.payload)?;
    let delay = validate::int_in(
        &field("delay_seconds"),
        item.delay_seconds,
        0,
        MAX_DELAY_SECONDS,
        0,
    )?;
    let priority = validate::int_in(
        &field("priority"),
        item.priority,
        i32::MIN.into(),
        i32::MAX.into(),
        0,
    )?;
    Ok(NewMessage {
        payload,
        delay: SignedDuration::from_secs(delay),
        priority: priority as i32,
        idempotency_key: validate::opt_token(&field("idempotency_key"), item.idempotency_key)?,
        group_id: validate::opt_token(&field("message_group_id"), item.message_group_id)?,
    })
}

fn header_key(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    headers
        .get("idempotency-key")
        .map(|v| {
            let key = v
                .to_str()
                .map_err(|_| ApiError::invalid("Idempotency-Key header must be visible ASCII"))?;
            validate::token("Idempotency-Key header", key)?;
            Ok(key.to_owned())
        })
        .transpose()
}

fn published(queue: &str, o: PublishOutcome, in_batch: bool) -> Result<PublishedMessage, ApiError> {
    Ok(PublishedMessage {
        message_id: o.message_id,
        queue: queue.to_owned(),
        payload: raw(o.payload)?,
        status: o.status,
        delivery_count: o.delivery_count,
        created_at: o.created_at,
        idempotent_replay: in_batch.then_some(o.replay),
    })
}

/// Wraps a stored (already valid) JSON text for output without re-encoding.
pub(crate) fn raw(json: String) -> Result<Box<RawValue>, ApiError> {
    RawValue::from_string(json)
        .map_err(|e| ApiError::from_store(onceq_store::StoreError::internal(e), ""))
}
