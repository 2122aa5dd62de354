//! Pausing and resuming a queue (queue-api-2.md §6). While paused, publishes
//! are accepted, consume hands out nothing (a long poll waits, and is woken
//! by the resume), push delivery stops; leases already out run on.

use axum::extract::State;
use onceq_store::QueuePause;
use onceq_types::reply::Paused;

use crate::{
    ApiError, AppState,
    caller::Caller,
    envelope::Reply,
    extract::QueuePath,
    openapi::{
        params::QueueParam,
        responses::{InvalidParams, NotFound, Ok, Refused, StoreFailed, Unauthorized},
    },
};

/// `POST /v1/queue/pause/{queue}`.
#[utoipa::path(
    post,
    path = "/v1/queue/pause/{queue}",
    operation_id = "queue_pause",
    tag = "queues",
    summary = "Pause a queue's hand-outs",
    description = "From now on consume hands out nothing from the queue (a long poll waits) and push delivery stops; publishes are still accepted and leases already out run on (ack, nack and extend work). Pausing a paused queue answers paused: true. No body.",
    params(QueueParam),
    responses(Ok<Paused>, InvalidParams, Unauthorized, Refused, NotFound, StoreFailed)
)]
pub async fn pause(
    State(state): State<AppState>,
    caller: Caller,
    QueuePath(queue): QueuePath,
) -> Result<Reply<Paused>, ApiError> {
    set_paused(&state, &caller, queue, true).await
}

/// `POST /v1/queue/resume/{queue}`.
#[utoipa::path(
    post,
    path = "/v1/queue/resume/{queue}",
    operation_id = "queue_resume",
    tag = "queues",
    summary = "Resume a paused queue",
    description = "Hand-outs start again at once: long polls waiting on the queue are woken (on other servers sharing the database, at their next re-check, within long_poll_recheck) and push delivery resumes. Resuming a running queue answers paused: false. No body.",
    params(QueueParam),
    responses(Ok<Paused>, InvalidParams, Unauthorized, Refused, NotFound, StoreFailed)
)]
pub async fn resume(
    State(state): State<AppState>,
    caller: Caller,
    QueuePath(queue): QueuePath,
) -> Result<Reply<Paused>, ApiError> {
    set_paused(&state, &caller, queue, false).await
}

async fn set_paused(
    state: &AppState,
    caller: &Caller,
    queue: String,
    paused: bool,
) -> Result<Reply<Paused>, ApiError> {
    let target = caller.queue(&queue)?;
    let record = state
        .messages()
        .pause(
            &caller.project,
            &queue,
            QueuePause {
                queue: target,
                paused,
            },
        )
        .await
        .map_err(|e| ApiError::from_store(e, &queue))?;
    Ok(caller.reply(Paused {
        queue,
        paused: record.paused,
    }))
}
