//! Queue management: create, update, list, get, delete, stats, purge, DLQ
//! redrive.

use axum::extract::State;
use onceq_store::{DlqRedrive, QueueCreate, QueueUpdate};
use onceq_types::{
    QueueRecord, QueueStats,
    reply::{Deleted, Items, Purged, Redriven},
    request::{CreateQueue, DeleteQueue, Redrive, UpdateQueue},
};

pub use crate::input::MAX_RETRIES;
use crate::{
    ApiError, AppState,
    caller::Caller,
    envelope::Reply,
    extract::{Body, QueuePath},
    input,
    openapi::{
        params::QueueParam,
        responses::{
            Conflict, InvalidParams, NotFound, Ok, OkList, Refused, StoreFailed, TimedOut,
            TooLarge, Unauthorized,
        },
    },
    webhooks::Event,
};

/// `POST /v1/queue/create`.
#[utoipa::path(
    post,
    path = "/v1/queue/create",
    tag = "queues",
    summary = "Create a queue",
    description = "Creates a queue and, unless dead_letter_queue names an existing one, its <name>-dlq. Creating it again with the same settings answers the existing queue; other settings are 409.",
    request_body = CreateQueue,
    responses(Ok<QueueRecord>, InvalidParams, Unauthorized, Refused, NotFound, Conflict, TooLarge, TimedOut, StoreFailed)
)]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Body(req): Body<CreateQueue>,
) -> Result<Reply<QueueRecord>, ApiError> {
    let input::CreateInput { name, settings } =
        input::create(req, state.config.completed_retention_seconds)?;
    let queue = caller.queue(&name)?;
    // Dead-lettering writes into the DLQ: the key must be allowed it too.
    if let Some(dlq) = &settings.dead_letter_queue {
        caller.queue(dlq)?;
    }
    let created = state
        .store()
        .queue_create(QueueCreate {
            queue,
            settings,
            now: state.clock.now(),
        })
        .await
        .map_err(|e| ApiError::from_store(e, &name))?;
    if created.created {
        state
            .emit(&caller.project, Event::QueueCreated { queue: name })
            .await;
    }
    Ok(caller.reply(created.record))
}

/// `POST /v1/queue/update`.
#[utoipa::path(
    post,
    path = "/v1/queue/update",
    operation_id = "queue_update",
    tag = "queues",
    summary = "Change a queue's settings",
    description = "Changes the settings the body names and keeps the others; later hand-outs follow them (leases already granted keep their end). The type cannot change (400). A dead_letter_queue must exist already (404 QUEUE_NOT_FOUND), be a standard queue and not the queue itself (400). retry_backoff and the max_in_flight and rate_per_sec caps are removed by null; completed_retention_seconds applies to leases granted from then on.",
    request_body = UpdateQueue,
    responses(Ok<QueueRecord>, InvalidParams, Unauthorized, Refused, NotFound, TooLarge, TimedOut, StoreFailed)
)]
pub async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Body(req): Body<UpdateQueue>,
) -> Result<Reply<QueueRecord>, ApiError> {
    let input::UpdateInput { name, changes } = input::update(req)?;
    let queue = caller.queue(&name)?;
    // Dead-lettering writes into the DLQ: the key must be allowed it too.
    if let Some(dlq) = &changes.dead_letter_queue {
        caller.queue(dlq)?;
    }
    let record = state
        .store()
        .queue_update(QueueUpdate {
            queue,
            changes,
            now: state.clock.now(),
        })
        .await
        .map_err(|e| ApiError::from_store(e, &name))?;
    Ok(caller.reply(record))
}

/// `GET /v1/queue/list`.
#[utoipa::path(
    get,
    path = "/v1/queue/list",
    tag = "queues",
    summary = "Every queue of the key's project",
    responses(OkList<QueueRecord>, Unauthorized, Refused, StoreFailed)
)]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Reply<Items<QueueRecord>>, ApiError> {
    let mut items = state
        .store()
        .queue_list(&caller.project)
        .await
        .map_err(|e| ApiError::from_store(e, ""))?;
    // A key limited to some queues sees only those.
    items.retain(|q| caller.may_use(&q.name));
    Ok(caller.reply(Items { items }))
}

/// `GET /v1/queue/get/{queue}`.
#[utoipa::path(
    get,
    path = "/v1/queue/get/{queue}",
    tag = "queues",
    summary = "One queue",
    params(QueueParam),
    responses(Ok<QueueRecord>, InvalidParams, Unauthorized, Refused, NotFound, StoreFailed)
)]
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    QueuePath(queue): QueuePath,
) -> Result<Reply<QueueRecord>, ApiError> {
    state
        .store()
        .queue_get(&caller.queue(&queue)?)
        .await
        .map_err(|e| ApiError::from_store(e, &queue))?
        .map(|r| caller.reply(r))
        .ok_or_else(|| ApiError::queue_not_found(&queue))
}

/// `DELETE /v1/queue/delete/{queue}`.
#[utoipa::path(
    delete,
    path = "/v1/queue/delete/{queue}",
    tag = "queues",
    summary = "Delete a queue and its messages",
    description = "Queues using it as their dead-letter queue are left without one. POST to the same path does the same (operation delete_post).",
    params(QueueParam),
    responses(Ok<Deleted>, InvalidParams, Unauthorized, Refused, NotFound, StoreFailed)
)]
pub async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    QueuePath(queue): QueuePath,
) -> Result<Reply<Deleted>, ApiError> {
    delete_queue(&state, &caller, queue).await
}

/// `POST /v1/queue/delete/{queue}`: [`delete`] for clients that cannot send
/// `DELETE`. A handler of its own because an operation id names one
/// method: one annotation for both gave both the id `delete`, which
/// generators refuse.
#[utoipa::path(
    post,
    path = "/v1/queue/delete/{queue}",
    operation_id = "delete_post",
    tag = "queues",
    summary = "Delete a queue and its messages (POST)",
    description = "The same as DELETE on this path, for clients that cannot send DELETE.",
    params(QueueParam),
    responses(Ok<Deleted>, InvalidParams, Unauthorized, Refused, NotFound, StoreFailed)
)]
pub async fn delete_post(
    state: State<AppState>,
    caller: Caller,
    queue: QueuePath,
) -> Result<Reply<Deleted>, ApiError> {
    delete(state, caller, queue).await
}

/// `POST /v1/queue/delete` with `{queue}`.
#[utoipa::path(
    post,
    path = "/v1/queue/delete",
    tag = "queues",
    summary = "Delete a queue named in the body",
    request_body = DeleteQueue,
    responses(Ok<Deleted>, InvalidParams, Unauthorized, Refused, NotFound, TooLarge, TimedOut, StoreFailed)
)]
pub async fn delete_by_body(
    State(state): State<AppState>,
    caller: Caller,
    Body(req): Body<DeleteQueue>,
) -> Result<Reply<Deleted>, ApiError> {
    let queue = input::delete(req)?;
    delete_queue(&state, &caller, queue).await
}

async fn delete_queue(
    state: &AppState,
    caller: &Caller,
    queue: String,
) -> Result<Reply<Deleted>, ApiError> {
    let messages_deleted = state
        .store()
        .queue_delete(&caller.queue(&queue)?)
        .await
        .map_err(|e| ApiError::from_store(e, &queue))?;
    let event = Event::QueueDeleted {
        queue: queue.clone(),
        messages_deleted,
    };
    state.emit(&caller.project, event).await;
    Ok(caller.reply(Deleted {
        queue,
        deleted: true,
        messages_deleted,
    }))
}

/// `GET /v1/queue/stats/{queue}`.
#[utoipa::path(
    get,
    path = "/v1/queue/stats/{queue}",
    tag = "queues",
    summary = "A queue's counts by state",
    params(QueueParam),
    responses(Ok<QueueStats>, InvalidParams, Unauthorized, Refused, NotFound, StoreFailed)
)]
pub async fn stats(
    State(state): State<AppState>,
    caller: Caller,
    QueuePath(queue): QueuePath,
) -> Result<Reply<QueueStats>, ApiError> {
    let stats = state
        .store()
        .queue_stats(&caller.queue(&queue)?, state.clock.now())
        .await
        .map_err(|e| ApiError::from_store(e, &queue))?;
    Ok(caller.reply(stats))
}

/// `POST /v1/queue/purge/{queue}`.
#[utoipa::path(
    post,
    path = "/v1/queue/purge/{queue}",
    tag = "queues",
    summary = "Delete every message a queue holds",
    description = "In-flight messages included; their holders' acks then answer acked: false.",
    params(QueueParam),
    responses(Ok<Purged>, InvalidParams, Unauthorized, Refused, NotFound, StoreFailed)
)]
pub async fn purge(
    State(state): State<AppState>,
    caller: Caller,
    QueuePath(queue): QueuePath,
) -> Result<Reply<Purged>, ApiError> {
    let purged = state
        .messages()
        .purge(&caller.queue(&queue)?)
        .await
        .map_err(|e| ApiError::from_store(e, &queue))?;
    Ok(caller.reply(Purged { purged }))
}

/// `POST /v1/queue/dlq/redrive/{queue}`.
#[utoipa::path(
    post,
    path = "/v1/queue/dlq/redrive/{queue}",
    tag = "queues",
    summary = "Move dead-lettered messages back into their queue",
    description = "Moves up to max_messages (default all) from the queue's dead-letter queue back into it, oldest first, delivery_count reset to 0, history (attempts, last_error) kept. With message_ids (1..=100), moves those dead letters only, in the order given: redriven counts them, not_found lists the ids the dead-letter queue does not hold and in_flight those a consumer of it holds (they stay). 400 when the queue has no dead-letter queue. The body may be empty.",
    params(QueueParam),
    // A $ref rather than `Option<Redrive>`: the body may be left out, but
    // when sent it is an object, never `null`.
    request_body(
        content = ref("#/components/schemas/Redrive"),
        content_type = "application/json",
        description = "Optional: an empty body moves every message."
    ),
    responses(Ok<Redriven>, InvalidParams, Unauthorized, Refused, NotFound, TooLarge, TimedOut, StoreFailed)
)]
pub async fn redrive(
    State(state): State<AppState>,
    caller: Caller,
    QueuePath(queue): QueuePath,
    Body(req): Body<Redrive>,
) -> Result<Reply<Redriven>, ApiError> {
    let what = input::redrive(req)?;
    let target = caller.queue(&queue)?;
    // Redrive reads the dead-letter queue: the key must be allowed that
    // one too. Checked for every key, `*` included (one more lookup), so
    // the check is among the call's needs and a replay of its answer to a
    // narrower key makes it again (`idempotency::needs`).
    let record = state
        .store()
        .queue_get(&target)
        .await
        .map_err(|e| ApiError::from_store(e, &queue))?;
    if let Some(dlq) = record.and_then(|r| r.dead_letter_queue) {
        caller.queue(&dlq)?;
    }
    let max = match what {
        input::RedriveInput::Some(max) => max,
        input::RedriveInput::Ids(ids) => {
            let answer = redrive_ids(&state, &caller.project, target, queue, ids).await?;
            return Ok(caller.reply(answer));
        }
    };
    let outcome = state
        .messages()
        .redrive(
            &caller.project,
            &queue,
            DlqRedrive {
                queue: target,
                max,
                now: state.clock.now(),
            },
        )
        .await
        .map_err(|e| ApiError::from_store(e, &queue))?;
    Ok(caller.reply(Redriven {
        queue,
        dead_letter_queue: outcome.dead_letter_queue,
        redriven: outcome.redriven,
        not_found: None,
        in_flight: None,
    }))
}

/// Redrives the chosen dead letters in one store call (one transaction,
/// `Store::dlq_redrive_many`), each as the dashboard's redrive of one.
async fn redrive_ids(
    state: &AppState,
    project: &str,
    target: onceq_store::QueueRef,
    queue: String,
    ids: Vec<String>,
) -> Result<Redriven, ApiError> {
    let moved = state
        .messages()
        .redrive_many(
            project,
            &queue,
            onceq_store::MessageIds {
                queue: target,
                message_ids: ids.clone(),
                now: state.clock.now(),
            },
        )
        .await
        .map_err(|e| ApiError::from_store(e, &queue))?;
    let mut answer = Redriven {
        queue,
        dead_letter_queue: moved.dead_letter_queue,
        redriven: 0,
        not_found: None,
        in_flight: None,
    };
    let (mut not_found, mut in_flight) = (Vec::new(), Vec::new());
    for (message_id, outcome) in ids.into_iter().zip(moved.outcomes) {
        match outcome {
            onceq_store::SingleOutcome::Done => answer.redriven += 1,
            onceq_store::SingleOutcome::NotFound => not_found.push(message_id),
            onceq_store::SingleOutcome::InFlight => in_flight.push(message_id),
        }
    }
    answer.not_found = Some(not_found);
    answer.in_flight = Some(in_flight);
    Ok(answer)
}
