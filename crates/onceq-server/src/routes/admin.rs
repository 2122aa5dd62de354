//! The admin API: keys and projects of every project, for a key with the
//! `accounts` action (the guard answers 403 to any other). Each handler
//! hands its body to [`crate::admin`], which the CLI calls too when it
//! works on the store directly.

use axum::extract::State;
use onceq_types::{
    admin::{
        CreatedKey, KeyCreate, KeyInfo, KeyLimits, KeyRevoke, KeyRotate, ProjectInfo, ProjectLimits,
    },
    reply::Items,
};

use crate::{
    ApiError, AppState, admin,
    caller::Caller,
    envelope::Reply,
    extract::Body,
    openapi::responses::{
        AdminNotFound, InvalidParams, Ok, OkList, Refused, StoreFailed, TimedOut, TooLarge,
        Unauthorized,
    },
};

/// `GET /v1/admin/keys`.
#[utoipa::path(
    get,
    path = "/v1/admin/keys",
    operation_id = "admin_keys_list",
    tag = "admin",
    summary = "Every key of every project",
    description = "Oldest first, revoked ones included, never their secrets. Needs a key with the accounts action.",
    responses(OkList<KeyInfo>, Unauthorized, Refused, StoreFailed)
)]
pub async fn keys_list(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Reply<Items<KeyInfo>>, ApiError> {
    let items = admin::keys_list(state.store().as_ref()).await?;
    Ok(caller.reply(Items { items }))
}

/// `POST /v1/admin/keys/create`.
#[utoipa::path(
    post,
    path = "/v1/admin/keys/create",
    operation_id = "admin_keys_create",
    tag = "admin",
    summary = "Create a key",
    description = "Creates a key for a project (and the project with its first key). The answer's secret is shown this once: the server keeps only its hash.",
    request_body = KeyCreate,
    responses(Ok<CreatedKey>, InvalidParams, Unauthorized, Refused, TooLarge, TimedOut, StoreFailed)
)]
pub async fn keys_create(
    State(state): State<AppState>,
    caller: Caller,
    Body(req): Body<KeyCreate>,
) -> Result<Reply<CreatedKey>, ApiError> {
    let created = admin::keys_create(state.store().as_ref(), req, state.clock.now()).await?;
    Ok(caller.reply(created))
}

/// `POST /v1/admin/keys/revoke`.
#[utoipa::path(
    post,
    path = "/v1/admin/keys/revoke",
    operation_id = "admin_keys_revoke",
    tag = "admin",
    summary = "Revoke a key",
    description = "Every server refuses the key from its next request on.",
    request_body = KeyRevoke,
    responses(Ok<KeyInfo>, InvalidParams, Unauthorized, Refused, AdminNotFound, TooLarge, TimedOut, StoreFailed)
)]
pub async fn keys_revoke(
    State(state): State<AppState>,
    caller: Caller,
    Body(req): Body<KeyRevoke>,
) -> Result<Reply<KeyInfo>, ApiError> {
    let key = admin::keys_revoke(state.store().as_ref(), req, state.clock.now()).await?;
    Ok(caller.reply(key))
}

/// `POST /v1/admin/keys/rotate`.
#[utoipa::path(
    post,
    path = "/v1/admin/keys/rotate",
    operation_id = "admin_keys_rotate",
    tag = "admin",
    summary = "Rotate a key",
    description = "A new key with the old one's project, scope, expiry and rate limit; its secret is shown this once. The old key keeps working until revoked, or for expire_old_in_seconds.",
    request_body = KeyRotate,
    responses(Ok<CreatedKey>, InvalidParams, Unauthorized, Refused, AdminNotFound, TooLarge, TimedOut, StoreFailed)
)]
pub async fn keys_rotate(
    State(state): State<AppState>,
    caller: Caller,
    Body(req): Body<KeyRotate>,
) -> Result<Reply<CreatedKey>, ApiError> {
    let created = admin::keys_rotate(state.store().as_ref(), req, state.clock.now()).await?;
    Ok(caller.reply(created))
}

/// `POST /v1/admin/keys/limits`.
#[utoipa::path(
    post,
    path = "/v1/admin/keys/limits",
    operation_id = "admin_keys_limits",
    tag = "admin",
    summary = "Set a key's rate limit",
    description = "rate_per_sec (0: unlimited) and rate_burst; rate_per_sec null goes back to the server's per-key default.",
    request_body = KeyLimits,
    responses(Ok<KeyInfo>, InvalidParams, Unauthorized, Refused, AdminNotFound, TooLarge, TimedOut, StoreFailed)
)]
pub async fn keys_limits(
    State(state): State<AppState>,
    caller: Caller,
    Body(req): Body<KeyLimits>,
) -> Result<Reply<KeyInfo>, ApiError> {
    let key = admin::keys_limits(state.store().as_ref(), req).await?;
    Ok(caller.reply(key))
}

/// `GET /v1/admin/projects`.
#[utoipa::path(
    get,
    path = "/v1/admin/projects",
    operation_id = "admin_projects_list",
    tag = "admin",
    summary = "Every project with its limits",
    description = "Credit limit, spend (as written by the servers so far) and rate limit of every project.",
    responses(OkList<ProjectInfo>, Unauthorized, Refused, StoreFailed)
)]
pub async fn projects_list(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Reply<Items<ProjectInfo>>, ApiError> {
    let items = admin::projects_list(state.store().as_ref()).await?;
    Ok(caller.reply(Items { items }))
}

/// `POST /v1/admin/projects/limits`.
#[utoipa::path(
    post,
    path = "/v1/admin/projects/limits",
    operation_id = "admin_projects_limits",
    tag = "admin",
    summary = "Set a project's credit and rate limits",
    description = "Sets what the body names: credit_limit_usd (null: no limit), rate_per_sec and rate_burst (rate_per_sec null: the server's default). Servers apply it within one account sync (about a second).",
    request_body = ProjectLimits,
    responses(Ok<ProjectInfo>, InvalidParams, Unauthorized, Refused, AdminNotFound, TooLarge, TimedOut, StoreFailed)
)]
pub async fn projects_limits(
    State(state): State<AppState>,
    caller: Caller,
    Body(req): Body<ProjectLimits>,
) -> Result<Reply<ProjectInfo>, ApiError> {
    let project = admin::projects_limits(state.store().as_ref(), req).await?;
    Ok(caller.reply(project))
}
