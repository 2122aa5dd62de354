//! Schema migrations (refinery, `migrations/V*.sql`), run by every server as
//! it connects.
//!
//! Several servers may start at once against one database; refinery itself
//! does not guard against that (two runners would both create its history
//! table or apply the same migration). So the run holds a session advisory
//! lock, on the same connection, and the others wait their turn and then
//! find nothing left to do.

use deadpool_postgres::Pool;

use super::errors::{Error, is_unavailable};
use crate::StoreError;

mod embedded {
    refinery::embed_migrations!("src/postgres/migrations");
}

/// The advisory lock key: "onceq" + 1, as bytes. Any fixed number works as
/// long as nothing else in the database uses it.
const LOCK_KEY: i64 = 0x6f6e_6365_7100_0001;

/// How many migrations the binary carries.
#[cfg(test)]
pub(super) fn count() -> usize {
    embedded::migrations::runner().get_migrations().len()
}

/// Applies pending migrations on one of `pool`'s connections.
pub(super) async fn run(pool: &Pool) -> Result<(), Error> {
    let mut client = pool.get().await?;
    run_on(&mut client).await
}

/// Applies pending migrations on `client`'s connection.
pub(super) async fn run_on(client: &mut tokio_postgres::Client) -> Result<(), Error> {
    client
        .execute("SELECT pg_advisory_lock($1)", &[&LOCK_KEY])
        .await?;
    let report = embedded::migrations::runner().run_async(client).await;
    // Unlock even when a migration failed; if the connection itself broke,
    // the server released the session lock already.
    let unlocked = client
        .execute("SELECT pg_advisory_unlock($1)", &[&LOCK_KEY])
        .await;
    let report = report.map_err(|e| {
        // A driver error keeps its meaning: a dropped connection is
        // Unavailable, anything else (a failing migration) Internal.
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
    })?;
    unlocked?;
    for m in report.applied_migrations() {
        tracing::info!(
            version = m.version(),
            name = m.name(),
            "postgres: applied migration"
        );
    }
    Ok(())
}
