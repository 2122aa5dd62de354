//! The connection pool, configured from the database URL.
//!
//! Connections are opened on demand, up to `pool_size` (a URL parameter of
//! ours, removed before the driver parses the URL; default 16). Recycling is
//! `Fast`: a connection whose socket closed (database restarted, backend
//! killed) is dropped when it comes back to the pool instead of being handed
//! out again, so the store recovers by itself once the database is back.

use std::str::FromStr;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};

use crate::{Result, StoreError};

/// Connections per server unless the URL says `pool_size=N`.
const DEFAULT_POOL_SIZE: usize = 16;

/// How long a request waits for a free connection before it is answered
/// `Unavailable`.
const WAIT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long opening a connection may take (unless the URL sets
/// `connect_timeout`): a database that does not answer is `Unavailable`
/// quickly rather than hanging requests.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Builds the pool, and returns it with the connection settings it uses
/// (for connections of its own, such as the key listener); connects
/// nothing yet.
pub(super) fn build(url: &str) -> Result<(Pool, tokio_postgres::Config)> {
    let (url, pool_size) = take_pool_size(url)?;
    let mut config = tokio_postgres::Config::from_str(&url)
        .map_err(|e| StoreError::Invalid(format!("invalid database URL: {e}")))?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    if config.get_application_name().is_none() {
        config.application_name("onceq");
    }
    // Notice a silently dead peer (no FIN, e.g. a failover) within about a
    // minute instead of the kernel's two hours.
    config.keepalives_idle(Duration::from_secs(30));

    let manager = Manager::from_config(
        config.clone(),
        tokio_postgres::NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    Pool::builder(manager)
        .max_size(pool_size + COMMITTER_CONNECTIONS)
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(WAIT_TIMEOUT))
        .create_timeout(Some(CONNECT_TIMEOUT))
        .recycle_timeout(Some(CONNECT_TIMEOUT))
        .build()
        .map(|pool| (pool, config))
        .map_err(StoreError::internal)
}

/// Connections the pool holds beyond `pool_size`: the committers (one for
/// publishes, three for batches, one for acks) each keep one once they
/// have run (see `hot.rs`), and must not leave fewer than `pool_size` to
/// everything else.
const COMMITTER_CONNECTIONS: usize =
    super::publish_group::CONNECTIONS + super::ack_group::CONNECTIONS;

/// Removes `pool_size=N` from a URL's query (the driver rejects unknown
/// parameters) and returns it.
fn take_pool_size(url: &str) -> Result<(String, usize)> {
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_owned(), DEFAULT_POOL_SIZE));
    };
    let mut size = DEFAULT_POOL_SIZE;
    let mut kept = Vec::new();
    for param in query.split('&') {
        match param.strip_prefix("pool_size=") {
            Some(v) => {
                size = v.parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(|| {
                    StoreError::Invalid(format!(
                        "pool_size in the database URL must be a positive integer (got {v:?})"
                    ))
                })?;
            }
            None => kept.push(param),
        }
    }
    let url = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((url, size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_size_is_ours() {
        let (url, n) = take_pool_size("postgres://h/db").unwrap();
        assert_eq!((url.as_str(), n), ("postgres://h/db", DEFAULT_POOL_SIZE));
        let (url, n) = take_pool_size("postgres://h/db?pool_size=4").unwrap();
        assert_eq!((url.as_str(), n), ("postgres://h/db", 4));
        let (url, n) =
            take_pool_size("postgres://h/db?sslmode=disable&pool_size=32&connect_timeout=2")
                .unwrap();
        assert_eq!(
            (url.as_str(), n),
            ("postgres://h/db?sslmode=disable&connect_timeout=2", 32)
        );
        assert!(take_pool_size("postgres://h/db?pool_size=0").is_err());
    }
}
