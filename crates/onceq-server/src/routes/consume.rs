//! `consume`, with long polling, and the acks of the previous batch it may
//! carry. What a consumer then does with its lease is in [`super::lease`]
//! (one message) and [`super::ack_batch`] (a batch's acks).

use std::time::Duration;

use axum::{Extension, extract::State};
use onceq_store::MessageClaim;
use onceq_types::{ConsumedMessage, MessageStatus, reply::Consumed, request::Consume};

use super::{ack_batch, publish::raw};
use crate::{
    ApiError, AppState,
    caller::Caller,
    connections::Slot,
    envelope::Reply,
    extract::Body,
    input,
    openapi::responses::{
        InvalidParams, NotFound, Ok, Refused, StoreFailed, TimedOut, TooLarge, Unauthorized,
    },
};

/// `POST /v1/queue/consume`.
///
/// The request's `acks` are applied first, in the first claim's store call
/// and transaction ([`onceq_store::Store::message_ack_many_then_claim`]),
/// so committed before any wait: a long poll that then waits holds no ack
/// back. A call that fails did none of them (acking again after a failure
/// whose outcome is unknown, a timeout, answers `LEASE_NOT_HELD` for those
/// done, harmlessly).
/// With `wait_seconds > 0` the claim long-polls
/// ([`Messages::claim_waiting`](crate::messages::Messages::claim_waiting)),
/// first taking a place under the key's and the project's caps on waiting
/// polls ([`crate::long_polls`]): past one, 429 before anything (the acks
/// included) is done. While it waits the poll is parked: a new connection
/// that finds the server full may cut it short ([`crate::connections`]).
#[utoipa::path(
    post,
    path = "/v1/queue/consume",
    tag = "messages",
    summary = "Take up to 10 messages under a lease (and ack the previous ones)",
    description = "Hands out available messages (priority first, then oldest) under a lease of visibility_timeout seconds; with wait_seconds it long-polls until a message arrives or the wait ends (then items is empty; a wait the server cuts short to make room for a new connection answers the same, with Connection: close). A key or project already at its cap on waiting long polls is answered 429 RATE_LIMITED with Retry-After before anything is done (wait_seconds 0 never is). acks (0 to 10, each message once, each with its receipt) are the previous batch's acks: applied in the first claim's transaction, so committed before any wait (a call that fails did none of them), answered in acks as ack_batch answers (absent when the request carried none), so a worker makes one call per batch.",
    request_body = Consume,
    responses(Ok<Consumed>, InvalidParams, Unauthorized, Refused, NotFound, TooLarge, TimedOut, StoreFailed)
)]
pub async fn consume(
    State(state): State<AppState>,
    caller: Caller,
    slot: Option<Extension<Slot>>,
    Body(req): Body<Consume>,
) -> Result<Reply<Consumed>, ApiError> {
    let input = input::consume(req)?;
    let target = caller.queue(&input.queue)?;
    let _place = match input.wait_seconds {
        0 => None,
        _ => Some(state.long_polls.enter(&caller.key_id, &caller.project)?),
    };
    let queue = input.queue;
    let acks = ack_batch::leases(&state, &target, &input.acks);
    let claim = MessageClaim {
        queue: target,
        max: input.max,
        visibility_timeout: input.visibility_timeout,
        now: state.clock.now(),
    };
    let wait = Duration::from_secs(input.wait_seconds);
    let (acked, claimed) = state
        .messages()
        .claim_waiting(
            &caller.project,
            &queue,
            claim,
            acks,
            wait,
            slot.as_ref().map(|Extension(Slot(c))| c),
        )
        .await
        .map_err(|e| ApiError::from_store(e, &queue))?;
    let acks = match input.acks.is_empty() {
        true => None,
        false => Some(ack_batch::answer(input.acks, acked)),
    };
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
    Ok(caller.reply(Consumed { items, acks }))
}
