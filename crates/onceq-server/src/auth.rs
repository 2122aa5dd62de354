//! API keys: their shape, their hashes, and their lookup. What a key may
//! do is checked by [`crate::principal`]; the guard in front of keyed
//! routes is [`crate::guard`].
//!
//! A generated key looks like `oq_<id>_<secret>`: `<id>` (8 characters) is
//! public and names the key in listings and revocations; the whole key is
//! only ever shown once. The store keeps SHA-256 of the whole key, and
//! requests are authenticated by looking that hash up. Keys of any other
//! shape (e.g. set through `ONCEQ_API_KEY`) work the same way.
//!
//! # Why a hash lookup is a constant-time comparison
//!
//! The secret is never compared with anything byte by byte. The server
//! hashes what the client sent and asks the store for a row with that hash
//! (an index probe on a UNIQUE column). What an attacker controls is the
//! input of SHA-256; where its output first differs from a stored hash is
//! unrelated to how close the guess was, so timing the lookup teaches
//! nothing about any key (preimage resistance). The keys themselves are 40
//! random alphanumerics drawn from 62 and lower-cased (digits 1/62 each,
//! letters 2/62: 5.12 bits a character, ~205 bits), so guessing is hopeless
//! anyway. The
//! store holds no secret: a stolen database yields hashes only.
//!
//! Every request looks its key up through the store. On SQLite that is a
//! query each time. On PostgreSQL the store keeps found keys in memory per
//! server (`onceq-store`'s `postgres/key_cache.rs`) and drops them all on
//! the NOTIFY that every change to the keys table sends (while its
//! listener is down, lookups go to the database): a revocation is refused
//! by every server sharing the database as soon as the notification is
//! delivered, and at once by the server that made it; there is no TTL.

use jiff::Timestamp;
use onceq_store::{KeyInsert, KeyRecord, Store, StoreError};
use onceq_types::{ErrorCode, scope::KeyScope};
use rand::{Rng, distr::Alphanumeric};
use sha2::{Digest, Sha256};

use crate::{ApiError, AppState};

/// The key of an `Authorization: Bearer <key>` header: 401 `UNAUTHORIZED`
/// if it is missing or malformed.
pub fn bearer(header: Option<&axum::http::HeaderValue>) -> Result<String, ApiError> {
    let header =
        header.ok_or_else(|| unauthorized("missing Authorization: Bearer <key> header"))?;
    let value = header
        .to_str()
        .map_err(|_| unauthorized("Authorization header is not valid text"))?;
    value
        .strip_prefix("Bearer ")
        .or_else(|| value.strip_prefix("bearer "))
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| unauthorized("Authorization header must be \"Bearer <key>\""))
}

/// The stored key `key` is: one lookup of its hash (see the module doc for
/// the PostgreSQL cache), so a revoked key is refused on its next request; 401 `UNAUTHORIZED` if it is unknown,
/// revoked or expired (by the server's clock).
pub async fn authenticate(state: &AppState, key: &str) -> Result<KeyRecord, ApiError> {
    let record = state
        .store()
        .key_lookup(&key_hash(key))
        .await
        .map_err(|e| ApiError::from_store(e, ""))?
        .ok_or_else(|| unauthorized("unknown or revoked API key"))?;
    if record.expires_at.is_some_and(|at| at <= state.clock.now()) {
        return Err(unauthorized("API key expired"));
    }
    Ok(record)
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

/// Stores a new generated key for `project`, allowed everything, and
/// returns it.
pub async fn create_key(
    store: &dyn Store,
    project: &str,
    label: Option<String>,
    now: Timestamp,
) -> Result<(NewKey, KeyRecord), StoreError> {
    create_scoped_key(store, project, label, KeyScope::default(), None, now).await
}

/// Stores a new generated key with a scope and an optional expiry.
pub async fn create_scoped_key(
    store: &dyn Store,
    project: &str,
    label: Option<String>,
    scope: KeyScope,
    expires_at: Option<Timestamp>,
    now: Timestamp,
) -> Result<(NewKey, KeyRecord), StoreError> {
    let key = generate_key();
    let record = store
        .key_insert(KeyInsert {
            project: project.to_owned(),
            key_id: key.key_id.clone(),
            key_hash: key_hash(&key.secret),
            label,
            scope,
            expires_at,
            now,
        })
        .await?;
    Ok((key, record))
}

/// Rotation: a new key with the same project and scope as `old_key_id`
/// (which must not be revoked). Both work until the old one is revoked or,
/// if `old_expires_at` is given, until then.
pub async fn rotate_key(
    store: &dyn Store,
    old_key_id: &str,
    old_expires_at: Option<Timestamp>,
    now: Timestamp,
) -> Result<(NewKey, KeyRecord), StoreError> {
    let old = store
        .key_get(old_key_id)
        .await?
        .filter(|k| k.revoked_at.is_none())
        .ok_or_else(|| StoreError::Invalid(format!("no active key with id {old_key_id:?}")))?;
    let label = Some(format!("rotated from {}", old.key_id));
    let (key, record) =
        create_scoped_key(store, &old.project, label, old.scope, old.expires_at, now).await?;
    if let Some(rate) = old.rate {
        store.key_set_rate(&record.key_id, Some(rate)).await?;
    }
    if old_expires_at.is_some() {
        store.key_set_expiry(&old.key_id, old_expires_at).await?;
    }
    let record = store.key_get(&record.key_id).await?.unwrap_or(record);
    Ok((key, record))
}

/// The label of keys [`ensure_key`] stores.
const ENV_KEY_LABEL: &str = "from ONCEQ_API_KEY";

/// Whether `key` was stored by [`ensure_key`] (from `ONCEQ_API_KEY`): its
/// id is `env` + 8 hex digits (generated ids are 8 characters) and its
/// label says so. What `crate::bootstrap` retires when the variable changes.
pub fn is_env_key(key: &KeyRecord) -> bool {
    key.key_id.len() == 11
        && key.key_id.starts_with("env")
        && key.key_id[3..].bytes().all(|b| b.is_ascii_hexdigit())
        && key.label.as_deref() == Some(ENV_KEY_LABEL)
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
    let key_id = format!("env{}", &hex::encode(&hash)[..8]);
    let insert = KeyInsert {
        project: project.to_owned(),
        key_id: key_id.clone(),
        key_hash: hash.clone(),
        label: Some(ENV_KEY_LABEL.into()),
        scope: crate::bootstrap::operator_scope(),
        expires_at: None,
        now,
    };
    match store.key_insert(insert).await {
        Ok(record) => Ok(record),
        // Another server inserted it at the same moment, or it was revoked.
        Err(e) => match store.key_lookup(&hash).await? {
            Some(found) => Ok(found),
            // A retired secret stays retired (it may be why it was
            // changed): the operator must choose a new one.
            None if store.key_get(&key_id).await?.is_some() => Err(StoreError::Invalid(format!(
                "ONCEQ_API_KEY is a key that was revoked ({key_id}: retired when the variable \
                 changed, or by `onceq keys revoke`); set a new value"
            ))),
            None => Err(e),
        },
    }
}
