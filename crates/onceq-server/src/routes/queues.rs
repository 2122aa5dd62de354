//! Queue management: create, list, get, delete, stats, purge, DLQ redrive.

use axum::extract::State;
use onceq_store::{DlqRedrive, QueueCreate};
use onceq_types::{
    QueueRecord, QueueStats,
    reply::{Deleted, Items, Purged, Redriven},
    request::{CreateQueue, DeleteQueue, Redrive},
};

pub use crate::input::MAX_RETRIES;
use crate::{
    ApiError, AppState,
    auth::Caller,
    envelope::Reply,
    extract::{Body, QueuePath},
    input,
};

/// `POST /v1/queue/create`.
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Body(req): Body<CreateQueue>,
) -> Result<Reply<QueueRecord>, ApiError> {
    let input::CreateInput { name, settings } = input::create(req)?;
    let queue = caller.queue(&name)?;
    // Dead-lettering writes into the DLQ: the key must be allowed it too.
    if let Some(dlq) = &settings.dead_letter_queue {
        caller.queue(dlq)?;
    }
    let created = state
        .store
        .queue_create(QueueCreate {
            queue,
            settings,
            now: state.clock.now(),
        })
        .await
        .map_err(|e| ApiError::from_store(e, &name))?;
    Ok(Reply::new(created.record))
}

/// `GET /v1/queue/list`.
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Reply<Items<QueueRecord>>, ApiError> {
    let mut items = state
        .store
        .queue_list(&caller.project)
        .await
        .map_err(|e| ApiError::from_store(e, ""))?;
    // A key limited to some queues sees only those.
    items.retain(|q| caller.may_use(&q.name));
    Ok(Reply::new(Items { items }))
}

/// `GET /v1/queue/get/{queue}`.
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    QueuePath(queue): QueuePath,
) -> Result<Reply<QueueRecord>, ApiError> {
    state
        .store
        .queue_get(&caller.queue(&queue)?)
        .await
        .map_err(|e| ApiError::from_store(e, &queue))?
        .map(Reply::new)
        .ok_or_else(|| ApiError::queue_not_found(&queue))
}

/// `DELETE /v1/queue/delete/{queue}` (and `POST` to the same path).
pub async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    QueuePath(queue): QueuePath,
) -> Result<Reply<Deleted>, ApiError> {
    delete_queue(&state, &caller, queue).await
}

/// `POST /v1/queue/delete` with `{queue}`.
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
        .store
        .queue_delete(&caller.queue(&queue)?)
        .await
        .map_err(|e| ApiError::from_store(e, &queue))?;
    Ok(Reply::new(Deleted {
        queue,
        deleted: true,
        messages_deleted,
    }))
}

/// `GET /v1/queue/stats/{queue}`.
pub async fn stats(
    State(state): State<AppState>,
    caller: Caller,
    QueuePath(queue): QueuePath,
) -> Result<Reply<QueueStats>, ApiError> {
    let stats = state
        .store
        .queue_stats(&caller.queue(&queue)?, state.clock.now())
        .await
        .map_err(|e| ApiError::from_store(e, &queue))?;
    Ok(Reply::new(stats))
}

/// `POST /v1/queue/purge/{queue}`.
pub async fn purge(
    State(state): State<AppState>,
    caller: Caller,
    QueuePath(queue): QueuePath,
) -> Result<Reply<Purged>, ApiError> {
    let purged = state
        .store
        .queue_purge(&caller.queue(&queue)?)
        .await
        .map_err(|e| ApiError::from_store(e, &queue))?;
    Ok(Reply::new(Purged { purged }))
}

/// `POST /v1/queue/dlq/redrive/{queue}`.
pub async fn redrive(
    State(state): State<AppState>,
    caller: Caller,
    QueuePath(queue): QueuePath,
    Body(req): Body<Redrive>,
) -> Result<Reply<Redriven>, ApiError> {
    let max = input::redrive(req)?;
    let target = caller.queue(&queue)?;
    // Redrive reads the dead-letter queue: a key limited to some queues
    // must be allowed that one too (one more lookup, for scoped keys only).
    if !caller.scope.queues.is_any() {
        let record = state
            .store
            .queue_get(&target)
            .await
            .map_err(|e| ApiError::from_store(e, &queue))?;
        if let Some(dlq) = record.and_then(|r| r.dead_letter_queue) {
            caller.queue(&dlq)?;
        }
    }
    let outcome = state
        .store
        .dlq_redrive(DlqRedrive {
            queue: target,
            max,
            now: state.clock.now(),
        })
        .await
        .map_err(|e| ApiError::from_store(e, &queue))?;
    if outcome.redriven > 0 {
        state.wakeups.wake(&caller.project, &queue);
    }
    Ok(Reply::new(Redriven {
        queue,
        dead_letter_queue: outcome.dead_letter_queue,
        redriven: outcome.redriven,
    }))
}
