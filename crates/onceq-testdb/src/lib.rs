//! A throwaway PostgreSQL for tests: no Docker, no downloads.
//!
//! Each test process gets one cluster ([`shared_cluster`]), started on first
//! use from the machine's PostgreSQL binaries, and each test a database of
//! its own: empty ([`fresh_database`]), or a copy of a template set up once
//! per process, e.g. migrated ([`database_from_template`]).
//!
//! - [`cluster`]: [`TestCluster`], `initdb` + a `postgres` that dies with the
//!   test process, even when the cluster is a `static` that is never dropped.
//! - [`host`]: where the binaries are and which user runs them (`initdb`
//!   refuses root, so as root everything runs as `postgres` via `runuser`).
//! - [`pgbouncer`]: Debian's pgbouncer in transaction pooling mode in
//!   front of a cluster.
//! - [`tls`]: a TLS-only cluster with certificates made at test time
//!   ([`shared_tls_cluster`]).
//! - [`template`]: databases cloned from a template made once per process.
//! - [`cases`]: the shared ledger's case tables (`crates/onceq/sql/cases/`)
//!   and their runners, used by the server's and the toolkit's tests.
//! - [`ports`]: ports for the servers tests start, below the ephemeral
//!   range so no outgoing connection takes one before its server binds.
//! - [`patroni`]: three nodes under Patroni on etcd, behind HAProxy
//!   ([`patroni::shared_patroni`]): automatic failover and switchovers.
//! - [`locks`]: races made on purpose, an operation run against a
//!   transaction that holds the locks it needs
//!   ([`locks::commit_once_waited_for`]).
//!
//! ```no_run
//! # async fn demo() {
//! let db = onceq_testdb::fresh_database().await;
//! let (client, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
//!     .await
//!     .unwrap();
//! tokio::spawn(conn);
//! client.simple_query("SELECT 1").await.unwrap();
//! # }
//! ```
#![warn(missing_docs)]

pub mod cases;
pub mod cluster;
pub mod host;
pub mod locks;
pub mod patroni;
pub mod pgbouncer;
pub mod ports;
pub mod template;
pub mod tls;

pub use cluster::{ClusterOptions, StopMode, TestCluster, TestDatabase};
pub use template::database_from_template;

static SHARED: tokio::sync::OnceCell<TestCluster> = tokio::sync::OnceCell::const_new();

/// The test process's cluster, started on first use. It is never dropped: its
/// `postgres` is stopped (and its directory removed) by a watchdog when the
/// test process exits.
pub async fn shared_cluster() -> &'static TestCluster {
    SHARED.get_or_init(TestCluster::start).await
}

static SHARED_TLS: tokio::sync::OnceCell<tls::TlsCluster> = tokio::sync::OnceCell::const_new();

/// The test process's TLS-only cluster, started on first use (see [`tls`]).
pub async fn shared_tls_cluster() -> &'static tls::TlsCluster {
    SHARED_TLS.get_or_init(tls::TlsCluster::start).await
}

static SHARED_PGBOUNCER: tokio::sync::OnceCell<pgbouncer::PgBouncer> =
    tokio::sync::OnceCell::const_new();

/// The test process's PgBouncer (transaction mode, up to 8 server
/// connections per database) in front of the shared cluster, started on
/// first use; stopped by its watchdog when the test process exits.
pub async fn shared_pgbouncer() -> &'static pgbouncer::PgBouncer {
    SHARED_PGBOUNCER
        .get_or_init(|| async { pgbouncer::PgBouncer::start(shared_cluster().await, 8).await })
        .await
}

/// A new, empty database on the shared cluster.
pub async fn fresh_database() -> TestDatabase {
    shared_cluster().await.create_database().await
}

/// A plain connection to `url` (no TLS), its driver task spawned: a test's
/// own SQL beside the code under test.
pub async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| panic!("connect to {url}: {e}"));
    tokio::spawn(connection);
    client
}

#[cfg(test)]
mod tests;
