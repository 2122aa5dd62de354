//! `consume` (with long polling), `ack`, `nack` and `extend`.

use std::time::Duration;

use axum::extract::State;
use jiff::SignedDuration;
use onceq_store::{LeaseRef, MessageAck, MessageClaim, MessageExtend, MessageNack};
use onceq_types::{
    ConsumedMessage, MessageStatus,
    reply::{Acked, Extended, Items, Nacked},
    request::{Ack, Consume, Extend, Nack},
};

use super::publish::raw;
use crate::{
    ApiError, AppState,
    auth::Caller,
    envelope::Reply,
    extract::Body,
    input::{self, LeaseInput},
    openapi::responses::{
        InvalidParams, NotFound, Ok, OkList, Refused, StoreFailed, TimedOut, TooLarge, Unauthorized,
    },
};

/// `POST /v1/queue/consume`.
///
/// With `wait_seconds > 0` the call long-polls: it returns as soon as at
/// least one message could be claimed, or empty when the wait is over.
/// While waiting it sleeps on the queue's wake-up channel (a publish on this
/// server wakes it at once) and re-checks the store every
/// `long_poll_recheck` for work that arrived some other way.
#[utoipa::path(
    post,
    path = "/v1/queue/consume",
    tag = "messages",
    summary = "Take up to 10 messages under a lease",
    description = "Hands out available messages (priority first, then oldest) under a lease of visibility_timeout seconds; with wait_seconds it long-polls until a message arrives or the wait ends (then items is empty).",
    request_body = Consume,
    responses(OkList<ConsumedMessage>, InvalidParams, Unauthorized, Refused, NotFound, TooLarge, TimedOut, StoreFailed)
)]
pub async fn consume(
    State(state): State<AppState>,
    caller: Caller,
    Body(req): Body<Consume>,
) -> Result<Reply<Items<ConsumedMessage>>, ApiError> {
    let input = input::consume(req)?;
    let target = caller.queue(&input.queue)?;
    let queue = input.queue;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(input.wait_seconds);
    let channel = state.wakeups.channel(&caller.project, &queue);

    loop {
        // Registered before the claim, so a publish that lands between an
        // empty claim and the wait still wakes us.
        let notified = channel.consumers.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();

        let claimed = state
            .store
            .message_claim(MessageClaim {
                queue: target.clone(),
                max: input.max,
                visibility_timeout: input.visibility_timeout,
                now: state.clock.now(),
            })
            .await
            .map_err(|e| ApiError::from_store(e, &queue))?;
        let now = tokio::time::Instant::now();
        if !claimed.is_empty() || now >= deadline || state.shutdown.is_cancelled() {
            state
                .metrics
                .consumed(&caller.project, &queue, claimed.len());
            let items = claimed
                .into_iter()
                .map(|m| {
                    Ok(ConsumedMessage {
                        message_id: m.message_id,
                        queue: queue.clone(),
                        payload: raw(m.payload)?,
                        status: MessageStatus::InFlight,
                        delivery_count: m.delivery_count,
                        receipt: m.receipt,
                        created_at: m.created_at,
                        lease_expires_at: m.lease_expires_at,
                        idempotency_key: m.idempotency_key,
                    })
                })
                .collect::<Result<Vec<_>, ApiError>>()?;
            return Ok(Reply::new(Items { items }));
        }
        let pause = (deadline - now).min(state.config.long_poll_recheck);
        tokio::select! {
            _ = notified => {}
            _ = tokio::time::sleep(pause) => {}
            _ = state.shutdown.cancelled() => {}
        }
    }
}

/// `POST /v1/queue/ack`.
#[utoipa::path(
    post,
    path = "/v1/queue/ack",
    tag = "messages",
    summary = "Delete a message held under a lease",
    description = "acked is false (still 200) when the message is not in flight, the receipt names another lease, or the queue or message is unknown.",
    request_body = Ack,
    responses(Ok<Acked>, InvalidParams, Unauthorized, Refused, TooLarge, TimedOut, StoreFailed)
)]
pub async fn ack(
    State(state): State<AppState>,
    caller: Caller,
    Body(req): Body<Ack>,
) -> Result<Reply<Acked>, ApiError> {
    let lease = lease(&caller, input::ack(req)?)?;
    let queue = lease.queue.queue.clone();
    let acked = state
        .store
        .message_ack(MessageAck {
            lease,
            now: state.clock.now(),
        })
        .await
        .map_err(|e| ApiError::from_store(e, &queue))?;
    state.metrics.acked(&caller.project, &queue, acked);
    state
        .throughput
        .acked(&caller.project, &queue, state.clock.now(), u64::from(acked));
    Ok(Reply::new(Acked { acked }))
}

/// `POST /v1/queue/nack`.
#[utoipa::path(
    post,
    path = "/v1/queue/nack",
    tag = "messages",
    summary = "Give a message back, or dead-letter it",
    description = "Ends a lease early: back to the queue (after delay_seconds), or to the dead-letter queue with requeue false or after the last allowed delivery. nacked is false when the lease is not held.",
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
    let delay = input.delay_seconds;
    let queue = lease.queue.queue.clone();
    let outcome = state
        .store
        .message_nack(MessageNack {
            lease,
            requeue: input.requeue,
            delay: SignedDuration::from_secs(delay),
            now: state.clock.now(),
        })
        .await
        .map_err(|e| ApiError::from_store(e, &queue))?;
    state.metrics.nacked(&caller.project, &queue, &outcome);
    if outcome.requeued && delay == 0 {
        state.wakeups.wake(&caller.project, &queue, 1);
    }
    Ok(Reply::new(Nacked {
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
        .store
        .message_extend(MessageExtend {
            lease,
            visibility_timeout: input.visibility_timeout,
            now: state.clock.now(),
        })
        .await
        .map_err(|e| ApiError::from_store(e, &queue))?;
    Ok(Reply::new(Extended {
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
