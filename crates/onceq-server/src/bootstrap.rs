//! The keys a server starts with.
//!
//! - **`ONCEQ_API_KEY`**: stored (hashed) for project `default` with the
//!   operator's actions (`full,accounts`), under an id derived from its
//!   hash ([`auth::ensure_key`]). A key an *earlier* value of the variable
//!   stored is revoked: changing the variable and restarting retires the
//!   old secret instead of leaving both working. Only keys made from the
//!   variable are retired (their ids, `env` + 8 hex digits, are a shape
//!   generated keys never have); keys made by `onceq keys create`, the
//!   admin API or a rotation are left alone. Without the variable nothing
//!   is retired.
//! - **First start**: a store with no active key gets one, printed once on
//!   stdout and written to [`KEY_FILE`] (mode 0600) in the key directory,
//!   so it is not lost in a log stream; the log says where it is.

use std::{io::Write, os::unix::fs::OpenOptionsExt, path::Path};

use jiff::Timestamp;
use onceq_store::{Store, StoreError};
use onceq_types::scope::{Actions, KeyScope, QueuePatterns};

use crate::auth;

/// The file the first key is written to, in the data directory.
pub const KEY_FILE: &str = "initial-api-key";

/// The operator's scope: every action, admin API included, on every queue.
pub fn operator_scope() -> KeyScope {
    KeyScope {
        actions: Actions::OPERATOR,
        queues: QueuePatterns::default(),
    }
}

/// Accepts `api_key` (retiring the key an earlier value made) if given;
/// otherwise, on a store with no active key, makes one, prints it and
/// writes it under `key_dir` (when there is one: see the module doc).
pub async fn keys(
    store: &dyn Store,
    api_key: Option<&str>,
    key_dir: Option<&Path>,
) -> Result<(), StoreError> {
    let now = Timestamp::now();
    if let Some(key) = api_key {
        let record = auth::ensure_key(store, "default", key, now).await?;
        tracing::info!(key_id = %record.key_id, project = %record.project, "accepting the key from ONCEQ_API_KEY");
        for old in store.key_list().await? {
            if old.revoked_at.is_none() && auth::is_env_key(&old) && old.key_id != record.key_id {
                store.key_revoke(&old.key_id, now).await?;
                tracing::info!(key_id = %old.key_id, "revoked the key an earlier ONCEQ_API_KEY made");
            }
        }
        return Ok(());
    }
    let active = store
        .key_list()
        .await?
        .into_iter()
        .any(|k| k.revoked_at.is_none());
    if active {
        return Ok(());
    }
    let (key, record) = auth::create_scoped_key(
        store,
        "default",
        Some("bootstrap".into()),
        operator_scope(),
        None,
        now,
    )
    .await?;
    // Printed, not logged: the log never carries a secret.
    println!(
        "Created an API key for project \"default\" (shown once, keep it):\n  {}",
        key.secret
    );
    match key_dir {
        Some(dir) => match write_key(&dir.join(KEY_FILE), &key.secret) {
            Ok(()) => tracing::info!(
                key_id = %record.key_id,
                file = %dir.join(KEY_FILE).display(),
                "created the first API key; its secret is in the file (mode 0600): delete it once stored elsewhere"
            ),
            Err(e) => tracing::warn!(
                key_id = %record.key_id,
                file = %dir.join(KEY_FILE).display(),
                error = %e,
                "created the first API key (printed on stdout) but could not write it to the file"
            ),
        },
        None => tracing::info!(
            key_id = %record.key_id,
            "created the first API key, printed on stdout only: --data-dir does not exist, so no file holds it"
        ),
    }
    Ok(())
}

/// Writes `secret` to `path`, readable by its owner only. A file left by
/// an earlier first start is replaced (never widened: it is made anew).
fn write_key(path: &Path, secret: &str) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    writeln!(file, "{secret}")?;
    file.sync_all()
}
