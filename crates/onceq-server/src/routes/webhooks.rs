//! Account webhooks: register, list, an endpoint's recent attempts, a test
//! event sent at once, delete. Events themselves are `crate::webhooks`.
//!
//! Webhooks receive the events of every queue of the project, so these
//! calls need a key whose queue patterns allow every queue (`*`).

use axum::{
    extract::{FromRequestParts, Query, State, rejection::QueryRejection},
    http::request::Parts,
};
use onceq_store::{StoreError, WebhookAttemptRecord, WebhookInsert, WebhookRecord, WebhookRef};
use onceq_types::{
    ErrorCode,
    reply::Items,
    webhook::{
        MAX_ATTEMPTS_KEPT, MAX_WEBHOOKS_PER_PROJECT, RegisterWebhook, Webhook, WebhookAttempt,
        WebhookDeleted,
    },
};

use crate::{
    ApiError, AppState,
    caller::Caller,
    envelope::Reply,
    extract::Body,
    input,
    openapi::{
        params::{DeliveriesQuery, WebhookParam},
        responses::{
            InvalidParams, NotFound, Ok, OkList, Refused, StoreFailed, TimedOut, TooLarge,
            Unauthorized,
        },
    },
    outbound::{guard::Guard, secret},
    validate,
};

/// `POST /v1/account/webhooks/register`.
#[utoipa::path(
    post,
    path = "/v1/account/webhooks/register",
    operation_id = "webhook_register",
    tag = "webhooks",
    summary = "Register an account webhook",
    description = "Adds an endpoint that receives the project's events (at most 20 webhooks per project): each event is POSTed, signed like a push delivery, retried with backoff until delivered or given up (12 attempts, or 24 h), at least once, with an event id to dedupe by. events lists event types or \"*\"; an unknown one is a 400 naming it, with the list in the hint. The url follows push's rules (https://; http:// and loopback only where the operator allows them). The answer is the only one that shows the secret (the caller's, or a generated whsec_ one).",
    request_body = RegisterWebhook,
    responses(Ok<Webhook>, InvalidParams, Unauthorized, Refused, TooLarge, TimedOut, StoreFailed)
)]
pub async fn register(
    State(state): State<AppState>,
    caller: Caller,
    Body(req): Body<RegisterWebhook>,
) -> Result<Reply<Webhook>, ApiError> {
    every_queue(&caller)?;
    let input = input::webhook_register(req, &Guard::new(&state.config.push))?;
    let record = state
        .store()
        .webhook_insert(WebhookInsert {
            project: caller.project.clone(),
            url: input.url,
            events: input.events,
            secret: input.secret.unwrap_or_else(secret::generated),
            description: input.description,
            headers: input.headers,
            max_per_project: MAX_WEBHOOKS_PER_PROJECT,
            now: state.clock.now(),
        })
        .await
        .map_err(|e| match e {
            // The per-project limit.
            StoreError::Invalid(m) => {
                ApiError::invalid(m).with_hint("delete a webhook you no longer need first")
            }
            e => ApiError::from_store(e, ""),
        })?;
    refresh(&state).await;
    // The only answer that shows the secret.
    let secret = Some(record.secret.clone());
    Ok(caller.reply(Webhook {
        secret,
        ..shown(record)?
    }))
}

/// `GET /v1/account/webhooks/list`.
#[utoipa::path(
    get,
    path = "/v1/account/webhooks/list",
    operation_id = "webhook_list",
    tag = "webhooks",
    summary = "The project's account webhooks",
    description = "Oldest first, never with their secrets.",
    responses(OkList<Webhook>, Unauthorized, Refused, StoreFailed)
)]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Reply<Items<Webhook>>, ApiError> {
    every_queue(&caller)?;
    let items = state
        .store()
        .webhook_list(&caller.project)
        .await
        .map_err(|e| ApiError::from_store(e, ""))?
        .into_iter()
        .map(shown)
        .collect::<Result<_, _>>()?;
    Ok(caller.reply(Items { items }))
}

/// `GET /v1/account/webhooks/deliveries/{id}`.
#[utoipa::path(
    get,
    path = "/v1/account/webhooks/deliveries/{id}",
    operation_id = "webhook_deliveries",
    tag = "webhooks",
    summary = "A webhook's recent delivery attempts",
    description = "Newest first: time, event type and id, attempt number, outcome (delivered, retrying, gave_up), HTTP status, latency and error of each. The server keeps the latest 100 attempts per webhook; limit (1..=100, default 50) takes fewer. 404 NOT_FOUND for an unknown webhook.",
    params(WebhookParam, DeliveriesQuery),
    responses(OkList<WebhookAttempt>, InvalidParams, Unauthorized, Refused, NotFound, StoreFailed)
)]
pub async fn deliveries(
    State(state): State<AppState>,
    caller: Caller,
    WebhookPath(id): WebhookPath,
    query: Result<Query<DeliveriesQuery>, QueryRejection>,
) -> Result<Reply<Items<WebhookAttempt>>, ApiError> {
    every_queue(&caller)?;
    let Query(query) = query.map_err(|e| ApiError::invalid(format!("query: {e}")))?;
    let limit = validate::int_in("limit", query.limit, 1, MAX_ATTEMPTS_KEPT as i64, 50)?;
    let attempts = state
        .store()
        .webhook_attempts(&webhook(&caller, &id), limit as u32)
        .await
        .map_err(|e| ApiError::from_store(e, ""))?
        .ok_or_else(|| not_found(&id))?;
    Ok(caller.reply(Items {
        items: attempts.into_iter().map(attempt_shown).collect(),
    }))
}

/// `POST /v1/account/webhooks/test/{id}`.
#[utoipa::path(
    post,
    path = "/v1/account/webhooks/test/{id}",
    operation_id = "webhook_test",
    tag = "webhooks",
    summary = "Send a test event now",
    description = "Records a webhook.test event for this webhook only (whatever events it lists) and attempts it at once; the answer is that attempt (outcome delivered, or retrying when it failed: it is then retried like any event). 404 NOT_FOUND for an unknown webhook.",
    params(WebhookParam),
    responses(Ok<WebhookAttempt>, InvalidParams, Unauthorized, Refused, NotFound, StoreFailed)
)]
pub async fn test(
    State(state): State<AppState>,
    caller: Caller,
    WebhookPath(id): WebhookPath,
) -> Result<Reply<WebhookAttempt>, ApiError> {
    every_queue(&caller)?;
    let attempt = crate::webhooks::send_test(&state, &caller.project, &id)
        .await
        .map_err(|e| ApiError::from_store(e, ""))?
        .ok_or_else(|| not_found(&id))?;
    Ok(caller.reply(attempt_shown(attempt)))
}

/// `DELETE /v1/account/webhooks/delete/{id}`.
#[utoipa::path(
    delete,
    path = "/v1/account/webhooks/delete/{id}",
    operation_id = "webhook_delete",
    tag = "webhooks",
    summary = "Delete an account webhook",
    description = "Its pending events and its attempts go with it; an attempt in flight finishes but is not retried. POST to the same path does the same (operation webhook_delete_post). 404 NOT_FOUND for an unknown webhook.",
    params(WebhookParam),
    responses(Ok<WebhookDeleted>, InvalidParams, Unauthorized, Refused, NotFound, StoreFailed)
)]
pub async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    WebhookPath(id): WebhookPath,
) -> Result<Reply<WebhookDeleted>, ApiError> {
    every_queue(&caller)?;
    let deleted = state
        .store()
        .webhook_delete(&webhook(&caller, &id))
        .await
        .map_err(|e| ApiError::from_store(e, ""))?;
    if !deleted {
        return Err(not_found(&id));
    }
    refresh(&state).await;
    Ok(caller.reply(WebhookDeleted { id, deleted: true }))
}

/// `POST /v1/account/webhooks/delete/{id}`: [`delete`] for clients that
/// cannot send `DELETE`.
#[utoipa::path(
    post,
    path = "/v1/account/webhooks/delete/{id}",
    operation_id = "webhook_delete_post",
    tag = "webhooks",
    summary = "Delete an account webhook (POST)",
    description = "The same as DELETE on this path, for clients that cannot send DELETE.",
    params(WebhookParam),
    responses(Ok<WebhookDeleted>, InvalidParams, Unauthorized, Refused, NotFound, StoreFailed)
)]
pub async fn delete_post(
    state: State<AppState>,
    caller: Caller,
    path: WebhookPath,
) -> Result<Reply<WebhookDeleted>, ApiError> {
    delete(state, caller, path).await
}

/// 403 unless the key may use every queue: webhooks hear them all.
fn every_queue(caller: &Caller) -> Result<(), ApiError> {
    if caller.scope.queues.is_any() {
        caller.needed_every_queue();
        return Ok(());
    }
    Err(ApiError::forbidden(format!(
        "account webhooks receive the events of every queue; this API key may only use queues {}",
        caller.scope.queues
    ))
    .with_hint("use a key whose queues are *"))
}

fn webhook(caller: &Caller, id: &str) -> WebhookRef {
    WebhookRef {
        project: caller.project.clone(),
        webhook_id: id.to_owned(),
    }
}

fn not_found(id: &str) -> ApiError {
    ApiError::new(ErrorCode::NotFound, format!("webhook {id:?} not found"))
        .with_hint("GET /v1/account/webhooks/list shows this project's webhooks")
}

/// This server's cache at once (others refresh within a scan interval).
async fn refresh(state: &AppState) {
    if let Err(e) = state.events.listeners.refresh(state.store().as_ref()).await {
        tracing::warn!(error = %e, "webhook cache not refreshed; the dispatcher retries");
    }
}

/// A record as listed: never the secret.
fn shown(r: WebhookRecord) -> Result<Webhook, ApiError> {
    Ok(Webhook {
        headers: crate::headers::stored(r.headers.as_deref())?,
        id: r.webhook_id,
        url: r.url,
        events: r.events,
        description: r.description,
        created_at: r.created_at,
        secret: None,
    })
}

fn attempt_shown(a: WebhookAttemptRecord) -> WebhookAttempt {
    WebhookAttempt {
        attempted_at: a.attempted_at,
        event: a.event_type,
        event_id: a.event_id,
        attempt: a.attempt,
        outcome: a.outcome,
        status: a.status,
        latency_ms: a.latency_ms,
        error: a.error,
    }
}

/// The `{id}` path segment, validated.
pub struct WebhookPath(pub String);

impl<S: Send + Sync> FromRequestParts<S> for WebhookPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let axum::extract::Path(id) =
            axum::extract::Path::<String>::from_request_parts(parts, state)
                .await
                .map_err(|e| ApiError::invalid(format!("path: {e}")))?;
        validate::token("id", &id)?;
        Ok(WebhookPath(id))
    }
}
