//! Schema migrations (refinery, `migrations/V*.sql`), run by every server as
//! it connects.
//!
//! Several servers may start at once against one database; refinery itself
//! does not guard against that (two runners would both create its history
//! table or apply the same migration). So the run holds a session advisory
//! lock, on the same connection, and the others wait their turn and then
//! find nothing left to do.
//!
//! Behind a pooler in transaction mode there is no session to hold the lock
//! in (it would stay on whichever server connection took it). There, each
//! migration's own transaction is the guard: refinery applies a migration
//! and records it in one transaction, and its history's primary key lets
//! only one of two concurrent runs commit a version; the loser's whole
//! transaction rolls back, and its run is tried again, finding the work
//! done.

use std::time::Duration;

use tokio_postgres::error::SqlState;

use super::errors::{Error, is_unavailable};
use crate::{OpenMode, StoreError};

mod embedded {
    refinery::embed_migrations!("src/postgres/migrations");
}

/// The advisory lock key: "onceq" + 1, as bytes. Any fixed number works as
/// long as nothing else in the database uses it.
const LOCK_KEY: i64 = 0x6f6e_6365_7100_0001;

/// A runner of the embedded migrations (tests stop it at a version).
#[cfg(test)]
pub(super) fn runner() -> refinery::Runner {
    embedded::migrations::runner()
}

/// How many migrations the binary carries.
#[cfg(test)]
pub(super) fn count() -> usize {
    embedded::migrations::runner().get_migrations().len()
}

/// Runs of a migration that lost a race to another server's, behind a
/// pooler, before giving up.
const RACES: u32 = 10;

/// Applies pending migrations on `client`'s connection (see the module doc
/// for how concurrent servers are kept apart, with and without a pooler).
pub(super) async fn run(
    client: &mut tokio_postgres::Client,
    behind_pooler: bool,
    mode: OpenMode,
) -> Result<(), Error> {
    if !behind_pooler {
        let report = locked(client).await?;
        return applied(report, mode);
    }
    let mut lost = 0;
    loop {
        match embedded::migrations::runner().run_async(client).await {
            Ok(report) => return applied(report, mode),
            Err(e) if lost < RACES && lost_a_race(&e) => {
                lost += 1;
                tracing::debug!(error = %e, lost, "postgres: a migration raced another server's; again");
                tokio::time::sleep(Duration::from_millis(50 * u64::from(lost))).await;
            }
            Err(e) => return Err(failed(e)),
        }
    }
}

/// Whether a run failed because another server's run committed the same
/// migration (or created the same object) first.
fn lost_a_race(e: &refinery::Error) -> bool {
    let refinery::error::Kind::Connection(_, cause) = e.kind() else {
        return false;
    };
    let code = cause
        .downcast_ref::<tokio_postgres::Error>()
        .and_then(|e| e.code());
    code.is_some_and(|c| {
        [
            SqlState::UNIQUE_VIOLATION,
            SqlState::DUPLICATE_TABLE,
            SqlState::DUPLICATE_OBJECT,
            SqlState::DUPLICATE_FUNCTION,
            SqlState::T_R_DEADLOCK_DETECTED,
        ]
        .contains(c)
    })
}

/// Applies pending migrations on `client`'s connection, under the session
/// advisory lock, as the server does.
pub(super) async fn run_on(client: &mut tokio_postgres::Client) -> Result<(), Error> {
    let report = locked(client).await?;
    applied(report, OpenMode::Create)
}

/// Whether the database `client` is connected to holds onceq's schema
/// (refinery's history table and onceq's keys table, in the search path):
/// [`OpenMode::Existing`] refuses any other, named by `url` without its
/// password.
pub(super) async fn check_existing(
    client: &tokio_postgres::Client,
    url: &str,
) -> Result<(), Error> {
    // Unnamed (`query_typed`), in one message sequence: behind a pooler in
    // transaction mode a named statement's Parse and its Execute may reach
    // two server connections (`prepared statement "s0" does not exist`).
    let row = client
        .query_typed_one(
            "SELECT to_regclass('refinery_schema_history') IS NOT NULL \
             AND to_regclass('onceq_api_keys') IS NOT NULL",
            &[],
        )
        .await?;
    if row.get::<_, bool>(0) {
        return Ok(());
    }
    let name = client
        .query_typed_one("SELECT current_database()", &[])
        .await?
        .get::<_, String>(0);
    Err(Error::Store(StoreError::NotAStore(format!(
        "no onceq store in PostgreSQL database {name:?} ({}): it has no onceq schema",
        crate::redact_url(url)
    ))))
}

/// Refuses a read-only server before anything is tried on it: a standby
/// (or a primary with `default_transaction_read_only` on) would fail the
/// migration with a bare "db error". `Unavailable`: the node may be
/// promoted, or the URL may reach the primary once it is fixed.
pub(super) async fn check_writable(
    client: &tokio_postgres::Client,
    url: &str,
) -> Result<(), Error> {
    // Unnamed, as in `check_existing`: this runs behind a pooler too.
    let row = client.query_typed_one(super::sql::PING, &[]).await?;
    let (in_recovery, read_only): (bool, &str) = (row.get(0), row.get(1));
    if !in_recovery && read_only != "on" {
        return Ok(());
    }
    let why = match in_recovery {
        true => "a standby, in recovery",
        false => "transaction_read_only is on",
    };
    Err(Error::Store(StoreError::Unavailable(
        format!(
            "the PostgreSQL server at {} is read-only ({why}): onceq migrates its schema and \
             writes on the primary; give the primary's address, or list every host with \
             target_session_attrs=read-write (or use the proxy that routes to the primary)",
            crate::redact_url(url)
        )
        .into(),
    )))
}

async fn locked(client: &mut tokio_postgres::Client) -> Result<refinery::Report, Error> {
    client
        .execute("SELECT pg_advisory_lock($1)", &[&LOCK_KEY])
        .await?;
    let report = embedded::migrations::runner().run_async(client).await;
    // Unlock even when a migration failed; if the connection itself broke,
    // the server released the session lock already.
    let unlocked = client
        .execute("SELECT pg_advisory_unlock($1)", &[&LOCK_KEY])
        .await;
    let report = report.map_err(failed)?;
    unlocked?;
    Ok(report)
}

/// A failed run as an error: a dropped connection is `Unavailable`,
/// anything else (a failing migration) `Internal`.
fn failed(e: refinery::Error) -> Error {
    let unavailable = matches!(
        e.kind(),
        refinery::error::Kind::Connection(_, cause)
            if cause.downcast_ref::<tokio_postgres::Error>().is_some_and(is_unavailable)
    );
    let message = format!("migration failed: {e}");
    Error::Store(if unavailable {
        StoreError::Unavailable(message.into())
    } else {
        StoreError::internal(message)
    })
}

/// Logs what a run applied: the server says what it changed; an admin
/// command stays quiet.
fn applied(report: refinery::Report, mode: OpenMode) -> Result<(), Error> {
    for m in report.applied_migrations() {
        let (version, name) = (m.version(), m.name());
        match mode {
            OpenMode::Create => tracing::info!(version, name, "postgres: applied migration"),
            OpenMode::Existing => tracing::debug!(version, name, "postgres: applied migration"),
        }
    }
    Ok(())
}
