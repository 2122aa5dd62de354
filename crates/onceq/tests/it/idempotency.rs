//! The Idempotency-Key layer over real HTTP, on both ledgers (PostgreSQL on
//! the app database, SQLite in a temp dir), against a real queue server.
//!
//! - [`app`]: the test application (the seed's export route and friends).
//! - [`holes`]: one test per hole of `three-keys.md` Layer 1.
//! - [`kept`]: the seed behaviour that stays.
//! - [`cases`]: the shared case table (`sql/cases/ledger.json`) on both
//!   ledgers, its HTTP answers through the layer, and the fingerprint vectors.
//! - [`schema`]: creating an existing PostgreSQL ledger takes no table lock.

mod app;
mod cases;
mod holes;
mod kept;
mod schema;

/// Generates a `postgres` and a `sqlite` test for each `async fn(Backend)`.
macro_rules! on_both_ledgers {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            use super::super::app::Backend;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                super::$name(Backend::Postgres).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                super::$name(Backend::Sqlite).await
            }
        }
    )*};
}
use on_both_ledgers;
