//! Keys and projects of every project: the operations behind the admin API
//! (`routes::admin`) and behind `onceq keys`/`onceq projects` when they
//! work on the store directly, so both validate, refuse and answer alike.
//!
//! - [`input`]: the bodies validated into store params.
//! - this module: one function per operation, over any [`Store`], answering
//!   the wire records of `onceq_types::admin`.
//!
//! Servers see every change on the next request: key lookups are not
//! cached on SQLite and dropped by a NOTIFY on PostgreSQL ([`crate::auth`]);
//! project limits are re-read by the account sync (about once a second).

pub mod input;

use jiff::Timestamp;
use onceq_store::{KeyRecord, ProjectRecord, Store, StoreError};
use onceq_types::{
    ErrorCode,
    account::micros_to_usd,
    admin::{
        CreatedKey, KeyCreate, KeyInfo, KeyLimits, KeyRevoke, KeyRotate, ProjectInfo, ProjectLimits,
    },
};

use crate::{ApiError, auth};

/// Every key of every project, oldest first (never their secrets).
pub async fn keys_list(store: &dyn Store) -> Result<Vec<KeyInfo>, ApiError> {
    let keys = store.key_list().await.map_err(store_error)?;
    Ok(keys.into_iter().map(key_info).collect())
}

/// Creates a key; the answer holds its secret, the only time it is shown.
pub async fn keys_create(
    store: &dyn Store,
    req: KeyCreate,
    now: Timestamp,
) -> Result<CreatedKey, ApiError> {
    let new = input::key_create(req, now)?;
    let (key, record) = auth::create_scoped_key(
        store,
        &new.project,
        new.label,
        new.scope,
        new.expires_at,
        now,
    )
    .await
    .map_err(store_error)?;
    Ok(created(key, record))
}

/// Revokes a key, on every server at once; 404 if there is no active key
/// with that id.
pub async fn keys_revoke(
    store: &dyn Store,
    req: KeyRevoke,
    now: Timestamp,
) -> Result<KeyInfo, ApiError> {
    let key_id = input::key_id(req.key_id)?;
    if !store.key_revoke(&key_id, now).await.map_err(store_error)? {
        return Err(no_active_key(&key_id));
    }
    get_key(store, &key_id).await
}

/// A new key with the old one's project, scope, expiry and rate limit;
/// the old one keeps working until revoked (or `expire_old_in_seconds`).
pub async fn keys_rotate(
    store: &dyn Store,
    req: KeyRotate,
    now: Timestamp,
) -> Result<CreatedKey, ApiError> {
    let (old, old_expires) = input::key_rotate(req, now)?;
    let active = store.key_get(&old).await.map_err(store_error)?;
    if active.is_none_or(|k| k.revoked_at.is_some()) {
        return Err(no_active_key(&old));
    }
    let (key, record) = auth::rotate_key(store, &old, old_expires, now)
        .await
        .map_err(store_error)?;
    Ok(created(key, record))
}

/// Sets (or lifts) a key's own rate limit.
pub async fn keys_limits(store: &dyn Store, req: KeyLimits) -> Result<KeyInfo, ApiError> {
    let (key_id, rate) = input::key_limits(req)?;
    if !store
        .key_set_rate(&key_id, rate)
        .await
        .map_err(store_error)?
    {
        return Err(no_active_key(&key_id));
    }
    get_key(store, &key_id).await
}

/// Every project with its credit, spend and rate limit.
pub async fn projects_list(store: &dyn Store) -> Result<Vec<ProjectInfo>, ApiError> {
    let projects = store.project_list().await.map_err(store_error)?;
    Ok(projects.into_iter().map(project_info).collect())
}

/// Sets what the body names of a project's limits; 404 for a project that
/// does not exist (a project exists once a key names it).
pub async fn projects_limits(
    store: &dyn Store,
    req: ProjectLimits,
) -> Result<ProjectInfo, ApiError> {
    let set = input::project_limits(req)?;
    let name = set.project;
    // Checked first, so that nothing is half-set for a project that is not.
    let missing = || {
        ApiError::new(
            ErrorCode::NotFound,
            format!(
                "project {name:?} not found: a project exists once a key names it (POST /v1/admin/keys/create)"
            ),
        )
    };
    if store
        .project_get(&name)
        .await
        .map_err(store_error)?
        .is_none()
    {
        return Err(missing());
    }
    if let Some(credit) = set.credit_micros {
        store
            .project_set_credit(&name, credit)
            .await
            .map_err(store_error)?;
    }
    if let Some(rate) = set.rate {
        store
            .project_set_rate(&name, rate)
            .await
            .map_err(store_error)?;
    }
    let project = store.project_get(&name).await.map_err(store_error)?;
    project.map(project_info).ok_or_else(missing)
}

/// The wire record of a stored key.
pub fn key_info(k: KeyRecord) -> KeyInfo {
    KeyInfo {
        actions: k.scope.actions.to_string(),
        queues: k.scope.queues.to_string(),
        key_id: k.key_id,
        project: k.project,
        label: k.label,
        created_at: k.created_at,
        revoked_at: k.revoked_at,
        expires_at: k.expires_at,
        rate_per_sec: k.rate.map(|r| r.per_sec),
        rate_burst: k.rate.map(|r| r.burst),
    }
}

/// The wire record of a stored project.
pub fn project_info(p: ProjectRecord) -> ProjectInfo {
    ProjectInfo {
        name: p.name,
        created_at: p.created_at,
        credit_limit_usd: p.credit_limit_micros.map(micros_to_usd),
        spent_usd: micros_to_usd(p.spent_micros),
        rate_per_sec: p.rate.map(|r| r.per_sec),
        rate_burst: p.rate.map(|r| r.burst),
    }
}

fn created(key: auth::NewKey, record: KeyRecord) -> CreatedKey {
    CreatedKey {
        secret: key.secret,
        key: key_info(record),
    }
}

async fn get_key(store: &dyn Store, key_id: &str) -> Result<KeyInfo, ApiError> {
    let key = store.key_get(key_id).await.map_err(store_error)?;
    key.map(key_info).ok_or_else(|| no_active_key(key_id))
}

fn no_active_key(key_id: &str) -> ApiError {
    ApiError::new(
        ErrorCode::NotFound,
        format!("no active key with key_id {key_id:?}: list keys with GET /v1/admin/keys"),
    )
}

fn store_error(e: StoreError) -> ApiError {
    ApiError::from_store(e, "")
}
