//! API keys: their shape, their hashes, and the [`Caller`] extractor.
//!
//! A generated key looks like `oq_<id>_<secret>`: `<id>` (8 characters) is
//! public and names the key in listings and revocations; the whole key is
//! only ever shown once. The store keeps SHA-256 of the whole key, and
//! requests are authenticated by looking that hash up, so comparing keys
//! never depends on where a guess first differs. Keys of any other shape
//! (e.g. set through `ONCEQ_API_KEY`) work the same way.

use axum::{extract::FromRequestParts, http::request::Parts};
use jiff::Timestamp;
use onceq_store::{KeyInsert, KeyRecord, Store, StoreError};
use onceq_types::ErrorCode;
use rand::{Rng, distr::Alphanumeric};
use sha2::{Digest, Sha256};

use crate::{ApiError, AppState};

/// The project a request acts for, from its Bearer key.
#[derive(Debug, Clone)]
pub struct Caller {
    /// The project; every queue the request touches is scoped to it.
    pub project: String,
    /// The key's public id.
    pub key_id: String,
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let header = parts
            .headers
            .get(axum::http::header::AUTHORIZATION)
            .ok_or_else(|| unauthorized("missing Authorization: Bearer <key> header"))?;
        let value = header
            .to_str()
            .map_err(|_| unauthorized("Authorization header is not valid text"))?;
        let key = value
            .strip_prefix("Bearer ")
            .or_else(|| value.strip_prefix("bearer "))
            .map(str::trim)
            .filter(|k| !k.is_empty())
            .ok_or_else(|| unauthorized("Authorization header must be \"Bearer <key>\""))?;
        authenticate(state, key).await
    }
}

/// The project `key` acts for: one lookup of its hash, so a revoked key is
/// refused on its next request. `UNAUTHORIZED` for an unknown or revoked
/// key. The API's Bearer header and the dashboard's cookie both end here.
pub async fn authenticate(state: &AppState, key: &str) -> Result<Caller, ApiError> {
    let record = state
        .store
        .key_lookup(&key_hash(key))
        .await
        .map_err(|e| ApiError::from_store(e, ""))?
        .ok_or_else(|| unauthorized("unknown or revoked API key"))?;
    Ok(Caller {
        project: record.project,
        key_id: record.key_id,
    })
}

fn unauthorized(message: &str) -> ApiError {
    ApiError::new(ErrorCode::Unauthorized, message)
}

/// SHA-256 of a whole key: what the store keeps.
pub fn key_hash(key: &str) -> Vec<u8> {
    Sha256::digest(key.as_bytes()).to_vec()
}

/// A freshly generated key.
pub struct NewKey {
    /// The whole secret key, to show once.
    pub secret: String,
    /// Its public id.
    pub key_id: String,
}

/// Generates `oq_<id>_<secret>`.
pub fn generate_key() -> NewKey {
    let mut rng = rand::rng();
    let mut word = |n: usize| -> String {
        (&mut rng)
            .sample_iter(Alphanumeric)
            .take(n)
            .map(|b| char::from(b).to_ascii_lowercase())
            .collect()
    };
    let key_id = word(8);
    let secret = format!("oq_{key_id}_{}", word(40));
    NewKey { secret, key_id }
}

/// Stores a new generated key for `project` and returns it.
pub async fn create_key(
    store: &dyn Store,
    project: &str,
    label: Option<String>,
    now: Timestamp,
) -> Result<(NewKey, KeyRecord), StoreError> {
    let key = generate_key();
    let record = store
        .key_insert(KeyInsert {
            project: project.to_owned(),
            key_id: key.key_id.clone(),
            key_hash: key_hash(&key.secret),
            label,
            now,
        })
        .await?;
    Ok((key, record))
}

/// Makes sure a key given by the operator (e.g. `ONCEQ_API_KEY`) is stored
/// for `project`. Its public id derives from its hash, so every server that
/// starts with the same key agrees on it and a restart adds nothing.
pub async fn ensure_key(
    store: &dyn Store,
    project: &str,
    secret: &str,
    now: Timestamp,
) -> Result<KeyRecord, StoreError> {
    let hash = key_hash(secret);
    if let Some(found) = store.key_lookup(&hash).await? {
        return Ok(found);
    }
    let insert = KeyInsert {
        project: project.to_owned(),
        key_id: format!("env{}", &hex::encode(&hash)[..8]),
        key_hash: hash.clone(),
        label: Some("from ONCEQ_API_KEY".into()),
        now,
    };
    match store.key_insert(insert).await {
        Ok(record) => Ok(record),
        // Another server inserted it at the same moment, or it was revoked.
        Err(e) => match store.key_lookup(&hash).await? {
            Some(found) => Ok(found),
            None => Err(e),
        },
    }
}
