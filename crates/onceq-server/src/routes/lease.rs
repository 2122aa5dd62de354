//! What a consumer does with a message it holds under a lease: `ack` (done),
//! `nack` (give it back, or dead-letter it) and `extend` (needs longer).
//! Each names the lease by queue, message id and receipt, and goes through
//! [`crate::messages`]. A batch's acks go in one call: [`super::ack_batch`].

use axum::extract::State;
use jiff::SignedDuration;
use onceq_store::{LeaseRef, MessageAck, MessageExtend, MessageNack, NackBy};
use onceq_types::{
    reply::{Acked, Extended, Nacked},
    request::{Ack, Extend, Nack},
};

use crate::{
    ApiError, AppState,
    caller::Caller,
    envelope::Reply,
    extract::Body,
    input::{self, LeaseInput},
    openapi::responses::{
        InvalidParams, Ok, Refused, StoreFailed, TimedOut, TooLarge, Unauthorized,
    },
};

/// `POST /v1/queue/ack`.
#[utoipa::path(
    post,
    path = "/v1/queue/ack",
    tag = "messages",
    summary = "Delete a message held under a lease",
    description = "acked is false (still 200) when the message is not in flight, the receipt names another lease, or the queue or message is unknown. result (any JSON, at most 64 KiB compact; 413 beyond) is kept with the message while its queue retains completed messages (completed_retention_seconds, then state completed), else dropped.",
    request_body = Ack,
    responses(Ok<Acked>, InvalidParams, Unauthorized, Refused, TooLarge, TimedOut, StoreFailed)
)]
pub async fn ack(
    State(state): State<AppState>,
    caller: Caller,
    Body(req): Body<Ack>,
) -> Result<Reply<Acked>, ApiError> {
    let (lease_input, result) = input::ack(req)?;
    let lease = lease(&caller, lease_input)?;
    let queue = lease.queue.queue.clone();
    let acked = state
        .messages()
        .ack(
            &caller.project,
            &queue,
            MessageAck {
                lease,
                result,
                now: state.clock.now(),
            },
        )
        .await
        .map_err(|e| ApiError::from_store(e, &queue))?;
    Ok(caller.reply(Acked { acked }))
}

/// `POST /v1/queue/nack`.
#[utoipa::path(
    post,
    path = "/v1/queue/nack",
    tag = "messages",
    summary = "Give a message back, or dead-letter it",
    description = "Ends a lease early: back to the queue (after delay_seconds; without it, after the queue's retry_backoff if it has one, else at once), or to the dead-letter queue with requeue false or after the last allowed delivery. nacked is false when the lease is not held.",
    request_body = Nack,
    responses(Ok<Nacked>, InvalidParams, Unauthorized, Refused, TooLarge, TimedOut, StoreFailed)
)]
pub async fn nack(
    State(state): State<AppState>,
    caller: Caller,
    Body(req): Body<Nack>,
) -> Result<Reply<Nacked>, ApiError> {
    let input = input::nack(req)?;
    let lease = lease(&caller, input.lease)?;
    let queue = lease.queue.queue.clone();
    // Only a nack with an error reports one (`message.failed`), and only
    // to a project listening for it.
    let failed = input
        .error
        .clone()
        .filter(|_| (state.events.listeners).wants(&caller.project, crate::webhooks::event::FAILED))
        .map(|e| (lease.message_id.clone(), e));
    let outcome = state
        .messages()
        .nack(
            &caller.project,
            &queue,
            MessageNack {
                lease,
                requeue: input.requeue,
                delay: SignedDuration::from_secs(input.delay_seconds),
                by_backoff: input.by_backoff,
                error: input.error,
                by: NackBy::Consumer,
                now: state.clock.now(),
            },
        )
        .await
        .map_err(|e| ApiError::from_store(e, &queue))?;
    if let Some((message_id, error)) = failed
        && outcome.nacked
    {
        let event = failed_nack(&queue, message_id, &outcome, error);
        state.emit(&caller.project, event).await;
    }
    Ok(caller.reply(Nacked {
        nacked: outcome.nacked,
        requeued: outcome.requeued,
        dead_lettered: outcome.dead_lettered,
        delivery_count: outcome.delivery_count,
    }))
}

/// `POST /v1/queue/extend`.
#[utoipa::path(
    post,
    path = "/v1/queue/extend",
    tag = "messages",
    summary = "Move a lease's end to now + visibility_timeout",
    description = "extended is false when the lease is not held; lease_expires_at is then the current lease's end, or null.",
    request_body = Extend,
    responses(Ok<Extended>, InvalidParams, Unauthorized, Refused, TooLarge, TimedOut, StoreFailed)
)]
pub async fn extend(
    State(state): State<AppState>,
    caller: Caller,
    Body(req): Body<Extend>,
) -> Result<Reply<Extended>, ApiError> {
    let input = input::extend(req)?;
    let lease = lease(&caller, input.lease)?;
    let queue = lease.queue.queue.clone();
    let outcome = state
        .messages()
        .extend(MessageExtend {
            lease,
            visibility_timeout: input.visibility_timeout,
            now: state.clock.now(),
        })
        .await
        .map_err(|e| ApiError::from_store(e, &queue))?;
    Ok(caller.reply(Extended {
        extended: outcome.extended,
        lease_expires_at: outcome.lease_expires_at,
    }))
}

fn lease(caller: &Caller, input: LeaseInput) -> Result<LeaseRef, ApiError> {
    Ok(LeaseRef {
        queue: caller.queue(&input.queue)?,
        message_id: input.message_id,
        receipt: input.receipt,
    })
}

/// `message.failed` for a nack that carries an error.
fn failed_nack(
    queue: &str,
    message_id: String,
    outcome: &onceq_store::NackOutcome,
    error: String,
) -> crate::webhooks::Event {
    crate::webhooks::Event::Failed {
        queue: queue.to_owned(),
        reason: "nack",
        message_id: Some(message_id),
        delivery_count: Some(outcome.delivery_count),
        error: Some(error),
        subscription_id: None,
        count: 1,
    }
}
