//! Schema migrations (refinery, `migrations/V*.sql`), run as the store
//! opens its file.

use rusqlite::Connection;

use crate::{Result, StoreError};

/// The migrations under `src/sqlite/migrations`, applied by [`run`].
/// A module of its own so refinery's generated `migrations` module does not
/// meet the PostgreSQL backend's.
mod embedded {
    refinery::embed_migrations!("src/sqlite/migrations");
}

/// Applies pending migrations. Two processes opening a fresh file at once
/// (the server and the CLI) can race to apply the same migration; the loser
/// fails on "table already exists", so it tries once more and then finds the
/// migration applied.
pub(super) fn run(conn: &mut Connection) -> Result<()> {
    let runner = embedded::migrations::runner();
    match runner.run(conn) {
        Ok(_) => Ok(()),
        Err(first) => {
            tracing::debug!(error = %first, "SQLite migration failed, retrying once");
            runner
                .run(conn)
                .map(|_| ())
                .map_err(|e| StoreError::internal(format!("migrating the SQLite schema: {e}")))
        }
    }
}
