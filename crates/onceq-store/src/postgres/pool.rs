//! The connection pool, configured from the database URL.
//!
//! Connections are opened on demand, up to `pool_size` (a URL parameter of
//! ours, removed before the driver parses the URL; default 16). Recycling is
//! `Fast`: a connection whose socket closed (database restarted, backend
//! killed) is dropped when it comes back to the pool instead of being handed
//! out again, so the store recovers by itself once the database is back.
//!
//! `pgbouncer=transaction` (ours too) says a pooler in transaction mode is
//! in front: statements then go out unnamed (`db.rs`), committers set no
//! session settings (`hot.rs`), and the key cache is kept exact by polling
//! a change count instead of LISTEN (`key_cache.rs`).
//!
//! A connection that may be on a read-only server is never handed out
//! again: after a write was refused as read-only (a standby, or a fenced
//! old primary still behind a proxy), every connection opened before that
//! is dropped as it comes up ([`ReadOnlySeen`]), and new ones are opened.
//!
//! Nothing here waits longer than the store timeout: not for a free
//! connection, not to open one (the URL's `connect_timeout` when shorter),
//! and a connection whose sent data stays unacknowledged that long (the
//! network black-holed) is closed by the kernel (`tcp_user_timeout`, unless
//! the URL sets it).

use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{HookError, ManagerConfig, Pool, RecyclingMethod, Runtime};
use onceq_pg::PgConnect;

use super::db::ReadOnlySeen;

use crate::{Result, StoreError};

/// Connections per server unless the URL says `pool_size=N`.
const DEFAULT_POOL_SIZE: usize = 16;

/// What the URL says of ours, beside what the driver reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Ours {
    /// `pool_size`.
    pub pool_size: usize,
    /// `pgbouncer=transaction`: a pooler in transaction mode is in front.
    pub behind_pooler: bool,
}

/// Builds the pool, and returns it with the connection settings it uses
/// (for connections of its own, such as the key listener), our own
/// parameters and the read-only mark its recycling obeys; connects nothing
/// yet. TLS, several hosts and timeouts come
/// from the URL as libpq reads it (`onceq-pg`). `bound` is the store
/// timeout: the longest a request waits for a free connection, or for one
/// to be opened, before it is answered `Unavailable`.
pub(super) fn build(
    url: &str,
    bound: Duration,
) -> Result<(Pool, PgConnect, Ours, Arc<ReadOnlySeen>)> {
    let (url, ours) = take_ours(url)?;
    let pool_size = ours.pool_size;
    let mut pg = PgConnect::parse(&url).map_err(|e| StoreError::Invalid(e.to_string()))?;
    if pg.config().get_tcp_user_timeout().is_none() {
        // A frozen server's kernel still acknowledges (the operations'
        // own bound covers that); a black-holed link does not, and its
        // connections are closed after this instead of after minutes of
        // retransmissions.
        pg.config_mut().tcp_user_timeout(bound);
    }
    let connect_timeout = pg
        .config()
        .get_connect_timeout()
        .copied()
        .unwrap_or(onceq_pg::DEFAULT_CONNECT_TIMEOUT)
        .min(bound);
    let manager = pg.manager(ManagerConfig {
        recycling_method: RecyclingMethod::Fast,
    });
    let read_only = Arc::new(ReadOnlySeen::default());
    let seen = read_only.clone();
    let behind_pooler = ours.behind_pooler;
    Pool::builder(manager)
        .post_create(deadpool_postgres::Hook::async_fn(move |client, _| {
            Box::pin(async move {
                // JIT off for the whole session: the statements here touch
                // few rows, and a plan whose cost is estimated from the
                // table's size (a generic plan, a count beside a big
                // backlog) passed `jit_above_cost` and spent most of a
                // second compiling itself (docs/performance.md, change 10
                // and session 27). Behind a pooler a SET would stay on the
                // server connection for the pooler's other clients: the hot
                // statements set it for their transaction instead
                // (`sql::HOT_BEGIN`), and docs/configuration.md says how to
                // set it for the role.
                match behind_pooler {
                    true => Ok(()),
                    false => client
                        .batch_execute("SET jit = off")
                        .await
                        .map_err(HookError::Backend),
                }
            })
        }))
        .pre_recycle(deadpool_postgres::Hook::sync_fn(
            move |_, metrics| match seen.stale(metrics.created) {
                true => Err(HookError::message(
                    "opened before a write was refused as read-only",
                )),
                false => Ok(()),
            },
        ))
        .max_size(pool_size + COMMITTER_CONNECTIONS)
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(bound))
        .create_timeout(Some(connect_timeout))
        .recycle_timeout(Some(connect_timeout))
        .build()
        .map(|pool| (pool, pg, ours, read_only))
        .map_err(StoreError::internal)
}

/// Connections the pool holds beyond `pool_size`: the committers (one for
/// publishes, three for batches, one for acks) each keep one once they
/// have run (see `hot.rs`), and must not leave fewer than `pool_size` to
/// everything else.
const COMMITTER_CONNECTIONS: usize =
    super::publish_group::CONNECTIONS + super::ack_group::CONNECTIONS;

/// Removes our parameters (`pool_size=N`, `pgbouncer=transaction`) from a
/// URL's query (the driver rejects unknown parameters) and returns them.
fn take_ours(url: &str) -> Result<(String, Ours)> {
    let mut ours = Ours {
        pool_size: DEFAULT_POOL_SIZE,
        behind_pooler: false,
    };
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_owned(), ours));
    };
    let mut kept = Vec::new();
    for param in query.split('&') {
        if let Some(v) = param.strip_prefix("pool_size=") {
            ours.pool_size = v.parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(|| {
                StoreError::Invalid(format!(
                    "pool_size in the database URL must be a positive integer (got {v:?})"
                ))
            })?;
        } else if let Some(v) = param.strip_prefix("pgbouncer=") {
            ours.behind_pooler = match v {
                "transaction" => true,
                "off" | "session" => false,
                _ => {
                    return Err(StoreError::Invalid(format!(
                        "pgbouncer in the database URL must be transaction (a pooler in transaction mode is in front), session or off (got {v:?})"
                    )));
                }
            };
        } else {
            kept.push(param);
        }
    }
    let url = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((url, ours))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(url: &str) -> Result<(String, usize)> {
        take_ours(url).map(|(url, ours)| (url, ours.pool_size))
    }

    #[test]
    fn pool_size_is_ours() {
        let (url, n) = size("postgres://h/db").unwrap();
        assert_eq!((url.as_str(), n), ("postgres://h/db", DEFAULT_POOL_SIZE));
        let (url, n) = size("postgres://h/db?pool_size=4").unwrap();
        assert_eq!((url.as_str(), n), ("postgres://h/db", 4));
        let (url, n) =
            size("postgres://h/db?sslmode=disable&pool_size=32&connect_timeout=2").unwrap();
        assert_eq!(
            (url.as_str(), n),
            ("postgres://h/db?sslmode=disable&connect_timeout=2", 32)
        );
        assert!(size("postgres://h/db?pool_size=0").is_err());
    }

    #[test]
    fn pgbouncer_is_ours() {
        let (url, ours) = take_ours("postgres://h/db?pgbouncer=transaction&x=1").unwrap();
        assert_eq!(url, "postgres://h/db?x=1");
        assert!(ours.behind_pooler);
        assert!(
            !take_ours("postgres://h/db?pgbouncer=off")
                .unwrap()
                .1
                .behind_pooler
        );
        let e = take_ours("postgres://h/db?pgbouncer=yes")
            .unwrap_err()
            .to_string();
        assert!(e.contains("transaction"), "{e}");
    }
}
