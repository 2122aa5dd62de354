//! onceq's storage seam.
//!
//! The server talks to storage only through the [`Store`] trait. Two backends
//! implement it and must behave identically; the conformance suite in
//! `tests/it/` runs every behaviour test against both.
//!
//! - [`store`]: the [`Store`] trait, the one seam.
//! - [`params`]: a params struct per operation, and what each returns.
//! - [`error`]: [`StoreError`], the failures callers branch on.
//! - [`ids`]: message ids and lease receipts.
//! - [`accounts`]: params of the account operations (credit limits, rate
//!   overrides, usage, server heartbeats).
//! - `rules`: a queue's rules, once, as pure functions both backends call:
//!   `queue_create`'s and `queue_update`'s decisions, the dead-letter rule, when a message is
//!   visible, dedupe planning, `message_list`'s pages, the retry backoff,
//!   the hand-out limits (`max_in_flight`, the `rate_per_sec` bucket), a
//!   message's attempts (bounded history, lease expiry's text) and which
//!   acks keep finished messages.
//! - `depths`: the part of `queue_depths` both backends share.
//! - `key_cache`: key lookups from memory, for both backends (each keeps
//!   it exact its own way).
//! - [`postgres`]: PostgreSQL (production; several servers may share one
//!   database). Claims use `FOR UPDATE SKIP LOCKED`.
//! - [`traced`]: a `Store` wrapping another's every call in a span (traces
//!   of store operations; free when tracing is off).
//! - [`sqlite`]: the embedded store, one file, one writer thread that commits
//!   many concurrent requests in one transaction (group commit).
//!
//! Every operation takes its `now` from the caller, so tests control time
//! instead of sleeping, and all servers sharing a database agree on what the
//! caller said the time was.
#![warn(missing_docs)]

pub mod accounts;
mod depths;
pub mod error;
pub mod ids;
mod key_cache;
pub mod params;
pub mod postgres;
mod rules;
pub mod sqlite;
pub mod store;
#[cfg(test)]
mod test_support;
pub mod traced;

pub use accounts::*;
pub use error::{Result, StoreError};
pub use params::*;
pub use store::Store;

/// How long any one store call may wait on the database, unless the store
/// is opened with other [`StoreOptions`].
pub const DEFAULT_OP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Who opens a store, and so what may happen to it on opening.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OpenMode {
    /// The server: create the store when there is none (the data
    /// directory and its file, or the schema in an empty database) and
    /// migrate it, saying at INFO what was applied.
    #[default]
    Create,
    /// The admin commands (`onceq keys`, `onceq projects`): open an
    /// existing onceq store only. A missing data directory or file, or a
    /// database without onceq's schema (its migration history table and
    /// its keys table), is refused with [`StoreError::NotAStore`] instead
    /// of starting an empty store nobody serves. Pending migrations of an
    /// older onceq store are still applied (as the server would), logged
    /// at DEBUG: a command's output is not the place for them.
    Existing,
}

/// What a store is opened with, beyond where it is.
#[derive(Debug, Clone, Copy)]
pub struct StoreOptions {
    /// The bound on every store call's wait for the database: a call that
    /// gets no answer within it (the database stalled, its network
    /// black-holed, no free connection) fails `Unavailable` instead of
    /// hanging. It bounds each call, not a long poll's whole wait (a
    /// consume that waits claims again and again, each call bounded). On
    /// PostgreSQL it also bounds the pool's wait for a connection and
    /// opening one (with the URL's `connect_timeout` when that is shorter).
    pub op_timeout: std::time::Duration,
    /// Whether a missing store is created ([`OpenMode`]).
    pub mode: OpenMode,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            op_timeout: DEFAULT_OP_TIMEOUT,
            mode: OpenMode::Create,
        }
    }
}

/// A database URL without its password, for logs and messages.
pub fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let creds = &url[scheme + 3..at];
            let user = creds.split(':').next().unwrap_or("");
            format!("{}{user}:***{}", &url[..scheme + 3], &url[at..])
        }
        _ => url.to_owned(),
    }
}

/// Opens the store a server configuration names: PostgreSQL for a
/// `postgres://` or `postgresql://` URL, else the embedded store in `data_dir`.
/// Either way the schema is migrated before this returns. Every call waits
/// at most [`DEFAULT_OP_TIMEOUT`]; see [`open_with`].
pub async fn open(
    database_url: Option<&str>,
    data_dir: &std::path::Path,
) -> Result<std::sync::Arc<dyn Store>> {
    open_with(database_url, data_dir, StoreOptions::default()).await
}

/// [`open`], with `options` (the server passes its `--store-timeout-ms`).
pub async fn open_with(
    database_url: Option<&str>,
    data_dir: &std::path::Path,
    options: StoreOptions,
) -> Result<std::sync::Arc<dyn Store>> {
    match database_url {
        Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => Ok(
            std::sync::Arc::new(postgres::PgStore::connect_with(url, options).await?),
        ),
        Some(url) => Err(StoreError::Invalid(format!(
            "database URL must start with postgres:// or postgresql:// (got {:?})",
            url.split(':').next().unwrap_or_default()
        ))),
        None => Ok(std::sync::Arc::new(
            sqlite::SqliteStore::open_with(data_dir, options).await?,
        )),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn redacts_password() {
        assert_eq!(
            super::redact_url("postgres://u:secret@h:5432/db"),
            "postgres://u:***@h:5432/db"
        );
        assert_eq!(super::redact_url("postgres://h/db"), "postgres://h/db");
    }
}
