//! `consume`, with long polling. What a consumer then does with its lease
//! is in [`super::lease`].

use std::time::Duration;

use axum::extract::State;
use onceq_store::MessageClaim;
use onceq_types::{ConsumedMessage, MessageStatus, reply::Items, request::Consume};

use super::publish::raw;
use crate::{
    ApiError, AppState,
    caller::Caller,
    envelope::Reply,
    extract::Body,
    input,
    openapi::responses::{
        InvalidParams, NotFound, OkList, Refused, StoreFailed, TimedOut, TooLarge, Unauthorized,
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
            .messages()
            .claim(
                &caller.project,
                &queue,
                MessageClaim {
                    queue: target.clone(),
                    max: input.max,
                    visibility_timeout: input.visibility_timeout,
                    now: state.clock.now(),
                },
            )
            .await
            .map_err(|e| ApiError::from_store(e, &queue))?;
        let now = tokio::time::Instant::now();
        if !claimed.is_empty() || now >= deadline || state.shutdown.is_cancelled() {
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
                        headers: crate::headers::stored(m.headers.as_deref())?,
                    })
                })
                .collect::<Result<Vec<_>, ApiError>>()?;
            return Ok(caller.reply(Items { items }));
        }
        let pause = (deadline - now).min(state.config.long_poll_recheck);
        tokio::select! {
            _ = notified => {}
            _ = tokio::time::sleep(pause) => {}
            _ = state.shutdown.cancelled() => {}
        }
    }
}
