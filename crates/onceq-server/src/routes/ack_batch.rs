//! `ack_batch`: up to a consume's worth of acks of one queue in one call,
//! one store call and one transaction, answered entry by entry in SQS
//! DeleteMessageBatch's shape; and the same acks carried by a `consume`
//! ([`leases`], [`answer`]).

use axum::extract::State;
use onceq_store::{LeaseRef, MessageAck, QueueRef};
use onceq_types::{
    reply::{AckBatchResult, AckFailed, AckSucceeded, LEASE_NOT_HELD},
    request::AckBatch,
};

use crate::{
    ApiError, AppState,
    caller::Caller,
    envelope::Reply,
    extract::Body,
    input::{self, AckInput},
    openapi::responses::{
        InvalidParams, Ok, Refused, StoreFailed, TimedOut, TooLarge, Unauthorized,
    },
};

/// `POST /v1/queue/ack_batch`.
#[utoipa::path(
    post,
    path = "/v1/queue/ack_batch",
    tag = "messages",
    summary = "Delete up to 10 messages held under leases, in one call",
    description = "Each entry (1 to 10, each message once; a message named twice is 400) names a message and its receipt and may carry a result, as ack does (each at most 64 KiB compact; 413 beyond). All are done in one transaction and each is answered: successful lists the acks that ended their lease, failed the others with code LEASE_NOT_HELD (the message is not in flight under that receipt: acked already, its lease expired and it was handed out again, cancelled, or unknown) and sender_fault true, as SQS's DeleteMessageBatch answers. An unknown queue fails every entry.",
    request_body = AckBatch,
    responses(Ok<AckBatchResult>, InvalidParams, Unauthorized, Refused, TooLarge, TimedOut, StoreFailed)
)]
pub async fn ack_batch(
    State(state): State<AppState>,
    caller: Caller,
    Body(req): Body<AckBatch>,
) -> Result<Reply<AckBatchResult>, ApiError> {
    let (queue, entries) = input::ack_batch(req)?;
    let target = caller.queue(&queue)?;
    let answer = apply(&state, &caller, &target, entries).await?;
    Ok(caller.reply(answer))
}

/// Acks `entries` of `queue` in one store call and answers each.
pub async fn apply(
    state: &AppState,
    caller: &Caller,
    queue: &QueueRef,
    entries: Vec<AckInput>,
) -> Result<AckBatchResult, ApiError> {
    let acks = leases(state, queue, &entries);
    let acked = state
        .messages()
        .ack_many(&caller.project, &queue.queue, acks)
        .await
        .map_err(|e| ApiError::from_store(e, &queue.queue))?;
    Ok(answer(entries, acked))
}

/// The store's acks for `entries` of `queue`, as of now.
pub fn leases(state: &AppState, queue: &QueueRef, entries: &[AckInput]) -> Vec<MessageAck> {
    let now = state.clock.now();
    entries
        .iter()
        .map(|e| MessageAck {
            lease: LeaseRef {
                queue: queue.clone(),
                message_id: e.message_id.clone(),
                receipt: Some(e.receipt.clone()),
            },
            result: e.result.clone(),
            now,
        })
        .collect()
}

/// Each entry answered: `acked` says, in order, whether its ack ended its
/// lease.
pub fn answer(entries: Vec<AckInput>, acked: Vec<bool>) -> AckBatchResult {
    let mut answer = AckBatchResult::default();
    for (entry, acked) in entries.into_iter().zip(acked) {
        let message_id = entry.message_id;
        match acked {
            true => answer.successful.push(AckSucceeded { message_id }),
            false => answer.failed.push(AckFailed {
                message_id,
                code: LEASE_NOT_HELD.to_owned(),
                message: "not in flight under this receipt: acked already, its lease expired \
                          and it was handed out again, cancelled, or unknown"
                    .to_owned(),
                sender_fault: true,
            }),
        }
    }
    answer
}
