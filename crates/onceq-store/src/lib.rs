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
//!   `queue_create`'s decisions, the dead-letter rule, when a message is
//!   visible, dedupe planning, `message_list`'s pages.
//! - `depths`: the part of `queue_depths` both backends share.
//! - [`postgres`]: PostgreSQL (production; several servers may share one
//!   database). Claims use `FOR UPDATE SKIP LOCKED`.
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
pub mod params;
pub mod postgres;
mod rules;
pub mod sqlite;
pub mod store;

pub use accounts::*;
pub use error::{Result, StoreError};
pub use params::*;
pub use store::Store;

/// Opens the store a server configuration names: PostgreSQL for a
/// `postgres://` or `postgresql://` URL, else the embedded store in `data_dir`.
/// Either way the schema is migrated before this returns.
pub async fn open(
    database_url: Option<&str>,
    data_dir: &std::path::Path,
) -> Result<std::sync::Arc<dyn Store>> {
    match database_url {
        Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
            Ok(std::sync::Arc::new(postgres::PgStore::connect(url).await?))
        }
        Some(url) => Err(StoreError::Invalid(format!(
            "database URL must start with postgres:// or postgresql:// (got {:?})",
            url.split(':').next().unwrap_or_default()
        ))),
        None => Ok(std::sync::Arc::new(
            sqlite::SqliteStore::open(data_dir).await?,
        )),
    }
}
