//! One message by id (queue-api-2.md section 5): looked up wherever its
//! queue keeps it (in the queue, its dead-letter queue, or its finished
//! messages), or cancelled.

use axum::{
    extract::{FromRequestParts, State},
    http::request::Parts,
};
use onceq_store::{FinishedState, FoundMessage, MessageCancel, MessageGet};
use onceq_types::{MessageDetail, MessageState, MessageStatus, reply::Cancelled, request::Cancel};

use crate::{
    ApiError, AppState,
    caller::Caller,
    envelope::Reply,
    extract::Body,
    openapi::{
        params::MessageParams,
        responses::{
            InvalidParams, MessageMissing, NotFound, Ok, Refused, StoreFailed, TimedOut, TooLarge,
            Unauthorized,
        },
    },
    payloads::PayloadGate,
    validate,
};

/// `GET /v1/queue/message/{queue}/{message_id}`.
#[utoipa::path(
    get,
    path = "/v1/queue/message/{queue}/{message_id}",
    operation_id = "message_get",
    tag = "messages",
    summary = "One message, wherever it is",
    description = "The message in the queue (available, delayed, in_flight), in its dead-letter queue (dead_lettered), or kept finished while the queue retains finished messages (completed, cancelled; completed_retention_seconds), with its last 20 attempts and last_error. 404 MESSAGE_NOT_FOUND when none holds it (never published, or acked, cancelled, purged or expired since and not retained); 404 QUEUE_NOT_FOUND for an unknown queue.",
    params(MessageParams),
    responses(Ok<MessageDetail>, InvalidParams, Unauthorized, Refused, MessageMissing, StoreFailed)
)]
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    MessagePath(queue, message_id): MessagePath,
) -> Result<Reply<MessageDetail>, ApiError> {
    let target = caller.queue(&queue)?;
    let found = state
        .messages()
        .find(MessageGet {
            queue: target.clone(),
            message_id: message_id.clone(),
            now: state.clock.now(),
        })
        .await
        .map_err(|e| ApiError::from_store(e, &queue))?
        .ok_or_else(|| ApiError::message_not_found(&queue, &message_id))?;
    // A dead letter is the DLQ's message: a key limited to some queues must
    // be allowed that one too, as for a redrive (one more lookup, for
    // scoped keys only).
    if found.dead_lettered && !caller.scope.queues.is_any() {
        let record = state
            .store()
            .queue_get(&target)
            .await
            .map_err(|e| ApiError::from_store(e, &queue))?;
        if let Some(dlq) = record.and_then(|r| r.dead_letter_queue) {
            caller.queue(&dlq)?;
        }
    }
    Ok(caller.reply(detail(queue, found, caller.payloads())?))
}

/// `POST /v1/queue/cancel`.
#[utoipa::path(
    post,
    path = "/v1/queue/cancel",
    operation_id = "cancel",
    tag = "messages",
    summary = "Remove a waiting, delayed or in-flight message",
    description = "Removes the message from the queue whatever its state. An in-flight one's lease ends: a later ack or extend with its receipt answers false; its hand-out is recorded as a cancelled attempt. While the queue retains finished messages (completed_retention_seconds) it is kept as state cancelled. cancelled is false when the queue does not hold the message (a dead letter is its dead-letter queue's: cancel it there, or delete it in the dashboard); 404 QUEUE_NOT_FOUND for an unknown queue.",
    request_body = Cancel,
    responses(Ok<Cancelled>, InvalidParams, Unauthorized, Refused, NotFound, TooLarge, TimedOut, StoreFailed)
)]
pub async fn cancel(
    State(state): State<AppState>,
    caller: Caller,
    Body(req): Body<Cancel>,
) -> Result<Reply<Cancelled>, ApiError> {
    let (queue, message_id) = crate::input::cancel(req)?;
    let target = caller.queue(&queue)?;
    let cancelled = state
        .messages()
        .cancel(
            &caller.project,
            &queue,
            MessageCancel {
                queue: target,
                message_id,
                now: state.clock.now(),
            },
        )
        .await
        .map_err(|e| ApiError::from_store(e, &queue))?;
    Ok(caller.reply(Cancelled { cancelled }))
}

/// The answer for a message found in (or under) `queue`; its payload and
/// result only if `gate` lets the key read them.
fn detail(
    queue: String,
    found: FoundMessage,
    gate: PayloadGate,
) -> Result<MessageDetail, ApiError> {
    let r = found.record;
    let finished = found.finished;
    let state = match (&finished, found.dead_lettered, r.status) {
        (Some(f), _, _) => match f.state {
            FinishedState::Completed => MessageState::Completed,
            FinishedState::Cancelled => MessageState::Cancelled,
        },
        (None, true, _) => MessageState::DeadLettered,
        (None, false, MessageStatus::Available) => MessageState::Available,
        (None, false, MessageStatus::Delayed) => MessageState::Delayed,
        (None, false, MessageStatus::InFlight) => MessageState::InFlight,
        (None, false, MessageStatus::Gone) => {
            return Err(ApiError::message_not_found(&queue, &r.message_id));
        }
    };
    let payload = gate
        .reveal(r.payload)
        .map(crate::routes::publish::raw)
        .transpose()?;
    let (completed_at, result) = match finished {
        Some(f) => (
            Some(f.finished_at),
            gate.reveal(f.result)
                .flatten()
                .map(crate::routes::publish::raw)
                .transpose()?,
        ),
        None => (None, None),
    };
    Ok(MessageDetail {
        message_id: r.message_id,
        queue,
        state,
        payload,
        payload_withheld: gate.withheld(),
        headers: crate::headers::stored(r.headers.as_deref())?,
        priority: r.priority,
        message_group_id: r.group_id,
        idempotency_key: r.idempotency_key,
        delivery_count: r.delivery_count,
        created_at: r.created_at,
        visible_at: r.visible_at,
        lease_expires_at: r.lease_expires_at,
        completed_at,
        result,
        last_error: r.last_error,
        attempts: r.attempts,
    })
}

/// The `{queue}/{message_id}` path segments, validated.
pub struct MessagePath(pub String, pub String);

impl<S: Send + Sync> FromRequestParts<S> for MessagePath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let axum::extract::Path((queue, id)) =
            axum::extract::Path::<(String, String)>::from_request_parts(parts, state)
                .await
                .map_err(|e| ApiError::invalid(format!("path: {e}")))?;
        validate::queue_name("queue", &queue)?;
        validate::token("message_id", &id)?;
        Ok(MessagePath(queue, id))
    }
}
