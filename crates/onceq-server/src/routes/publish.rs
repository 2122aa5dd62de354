//! `publish` and `publish_batch`.
//!
//! Both are priced per message stored: the handler reserves the price of
//! every message before the store call (402 `INSUFFICIENT_CREDIT` if the
//! project cannot afford them, and nothing is stored), then charges only
//! the messages that were not replays.

use axum::{extract::State, http::HeaderMap};
use jiff::SignedDuration;
use onceq_store::{NewMessage, PublishOutcome, QueueRef};
use onceq_types::{
    PublishedMessage,
    reply::Items,
    request::{Publish, PublishBatch},
};
use serde_json::value::RawValue;

use crate::{
    ApiError, AppState,
    caller::Caller,
    envelope::Reply,
    extract::Body,
    input,
    openapi::responses::{
        InvalidParams, KeyReused, Ok, OkList, Refused, StoreFailed, TimedOut, TooLarge,
        Unauthorized,
    },
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
        description = "Used when the body has no idempotency_key: 1 to 255 characters of visible ASCII (! to ~, no spaces).",
        min_length = 1,
        max_length = 255,
        pattern = "^[!-~]{1,255}$"
    )),
    request_body = Publish,
    responses(Ok<PublishedMessage>, InvalidParams, Unauthorized, Refused, TooLarge, TimedOut, KeyReused, StoreFailed)
)]
pub async fn publish(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Body(req): Body<Publish>,
) -> Result<Reply<PublishedMessage>, ApiError> {
    let input::PublishInput { queue, message } =
        input::publish(req, headers.get("idempotency-key"))?;
    let target = caller.queue(&queue)?;
    let cap = caller.capability();
    caller.reserve(state.config.prices.cost_micros(cap, 1))?;
    let headers = message.headers.clone();
    let mut outcomes = store_messages(&state, target, vec![message]).await?;
    let outcome = outcomes
        .pop()
        .ok_or_else(|| ApiError::invalid("nothing published"))?;
    let fresh = usize::from(!outcome.replay);
    let cost = state.config.prices.cost_micros(cap, fresh);
    caller.charge(cost);
    let replay = outcome.replay;
    Ok(caller
        .reply(published(&queue, outcome, headers.as_deref(), false)?)
        .cost(onceq_types::account::micros_to_usd(cost))
        .replay(replay))
}

/// `POST /v1/queue/publish_batch`: 1..=10 messages (or the configured
/// `max_batch`), stored all or none.
#[utoipa::path(
    post,
    path = "/v1/queue/publish_batch",
    tag = "messages",
    summary = "Publish 1 to 10 messages, all or none",
    description = "Stores every message or none. Each item may carry its own idempotency key; with an Idempotency-Key header, an item without one takes `<header key>:<index>`, so a retried batch stores nothing twice. Each answer item says whether it was a replay, and metadata.idempotent_replay is true only when every item was. The contract's limit is 10 messages; a server started with --max-batch accepts up to that many instead.",
    params((
        "Idempotency-Key" = Option<String>,
        Header,
        description = "The stem of the keys of items without their own: item i takes `<key>:<i>`. 1 to 255 characters of visible ASCII (! to ~, no spaces), short enough for the longest derived key to be 255.",
        min_length = 1,
        max_length = 255,
        pattern = "^[!-~]{1,255}$"
    )),
    request_body = PublishBatch,
    responses(OkList<PublishedMessage>, InvalidParams, Unauthorized, Refused, TooLarge, TimedOut, KeyReused, StoreFailed)
)]
pub async fn publish_batch(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Body(req): Body<PublishBatch>,
) -> Result<Reply<Items<PublishedMessage>>, ApiError> {
    let input::BatchInput { queue, messages } =
        input::publish_batch(req, state.config.max_batch, headers.get("idempotency-key"))?;
    let target = caller.queue(&queue)?;
    let cap = caller.capability();
    caller.reserve(state.config.prices.cost_micros(cap, messages.len()))?;
    let headers: Vec<Option<String>> = messages.iter().map(|m| m.headers.clone()).collect();
    let outcomes = store_messages(&state, target, messages).await?;
    let fresh = outcomes.iter().filter(|o| !o.replay).count();
    let cost = state.config.prices.cost_micros(cap, fresh);
    caller.charge(cost);
    let items = outcomes
        .into_iter()
        .zip(&headers)
        .map(|(o, h)| published(&queue, o, h.as_deref(), true))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(caller
        .reply(Items { items })
        .cost(onceq_types::account::micros_to_usd(cost))
        .replay(fresh == 0))
}

async fn store_messages(
    state: &AppState,
    queue: QueueRef,
    messages: Vec<NewMessage>,
) -> Result<Vec<PublishOutcome>, ApiError> {
    let dedupe_window = SignedDuration::try_from(state.config.dedupe_window)
        .map_err(|_| ApiError::invalid("dedupe window out of range"))?;
    state
        .messages()
        .publish(&queue, messages, dedupe_window)
        .await
        .map_err(|e| ApiError::from_store(e, &queue.queue))
}

/// The answer for one message; `headers` are the publish's own (stored
/// form), as the payload is.
fn published(
    queue: &str,
    o: PublishOutcome,
    headers: Option<&str>,
    in_batch: bool,
) -> Result<PublishedMessage, ApiError> {
    Ok(PublishedMessage {
        message_id: o.message_id,
        queue: queue.to_owned(),
        payload: raw(o.payload)?,
        status: o.status,
        delivery_count: o.delivery_count,
        created_at: o.created_at,
        headers: crate::headers::stored(headers)?,
        idempotent_replay: in_batch.then_some(o.replay),
    })
}

/// Wraps a stored (already valid) JSON text for output without re-encoding.
pub(crate) fn raw(json: String) -> Result<Box<RawValue>, ApiError> {
    RawValue::from_string(json)
        .map_err(|e| ApiError::from_store(onceq_store::StoreError::internal(e), ""))
}
