//! PostgreSQL connections for onceq, made from a connection string as libpq
//! makes them: the server's store, the CLI, the toolkit's request ledger and
//! job facts, and the chaos harness all connect through [`PgConnect`], so a
//! URL that works for one works for all.
//!
//! - `params`: the parameters tokio-postgres does not know, taken out of
//!   either form of connection string (URL or `key=value` words).
//! - [`tls`]: `sslmode` (`disable`, `prefer`, `require`, `verify-ca`,
//!   `verify-full`), `sslrootcert` (a PEM file, or `system`; the system roots
//!   by default for `verify-*`), `sslcert` + `sslkey`, over rustls.
//!
//! Everything else — several hosts (`postgres://a:1,b:2/db`),
//! `target_session_attrs=read-write`, `connect_timeout`, keepalives — is
//! tokio-postgres's, which reads it as libpq does. When the string does not
//! say, connections time out after [`DEFAULT_CONNECT_TIMEOUT`] and probe an
//! idle peer after 30 s, so a database that does not answer is an error
//! soon, never a hang.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let pg = onceq_pg::PgConnect::parse(
//!     "postgres://app@db.internal/app?sslmode=verify-full&sslrootcert=/etc/ssl/db-ca.pem",
//! )?;
//! let client = pg.connect().await?;
//! client.simple_query("SELECT 1").await?;
//! let pool = pg.pool(16)?; // the same settings, for the toolkit's ledger and job facts
//! # Ok(()) }
//! ```
#![warn(missing_docs)]

mod params;
pub mod tls;

use std::{str::FromStr, time::Duration};

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::Config;
use tokio_postgres_rustls::MakeRustlsConnect;

pub use tls::{TlsParams, Verify};

/// How long opening a connection may take unless the string sets
/// `connect_timeout`.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Idle time before TCP keepalive probes start: a peer that vanished
/// without a FIN (a failover, a cut cable) is noticed within about a minute
/// instead of the kernel's two hours.
const KEEPALIVES_IDLE: Duration = Duration::from_secs(30);

/// A connection string that could not be used; the message names the
/// parameter or file and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PgError(String);

impl PgError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

/// Where and how to connect: the driver's settings and the TLS connector
/// that goes with them.
#[derive(Clone)]
pub struct PgConnect {
    config: Config,
    tls: MakeRustlsConnect,
    verify: Verify,
}

impl std::fmt::Debug for PgConnect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Config's Debug redacts the password.
        f.debug_struct("PgConnect")
            .field("config", &self.config)
            .field("verify", &self.verify)
            .finish_non_exhaustive()
    }
}

impl PgConnect {
    /// Reads a connection string (`postgres://…` or `host=… dbname=…`),
    /// loading the certificate files it names. Nothing is connected yet.
    pub fn parse(conn: &str) -> Result<Self, PgError> {
        let all: Vec<&str> = tls::KEYS
            .iter()
            .chain(tls::REFUSED.iter().map(|(k, _)| k))
            .copied()
            .collect();
        let split = params::take(conn, &all)?;
        let mut tls_params = TlsParams::default();
        for (key, value) in split.taken {
            if let Some((_, why)) = tls::REFUSED.iter().find(|(k, _)| *k == key) {
                return Err(PgError::new(format!("{key}: {why}")));
            }
            tls_params.set(&key, value);
        }
        let (ssl_mode, verify) = tls_params.mode()?;
        let mut config = Config::from_str(&split.rest)
            .map_err(|e| PgError::new(format!("invalid database URL: {e}")))?;
        config.ssl_mode(ssl_mode);
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(DEFAULT_CONNECT_TIMEOUT);
        }
        if config.get_keepalives_idle() == Duration::from_secs(2 * 60 * 60) {
            config.keepalives_idle(KEEPALIVES_IDLE);
        }
        if config.get_application_name().is_none() {
            config.application_name("onceq");
        }
        let mut rustls = if ssl_mode == tokio_postgres::config::SslMode::Disable {
            TlsParams::default().client_config(Verify::Nothing)?
        } else {
            tls_params.client_config(verify)?
        };
        // PostgreSQL 17's direct TLS negotiation requires this ALPN; older
        // servers ignore it.
        rustls.alpn_protocols = vec![b"postgresql".to_vec()];
        Ok(Self {
            config,
            tls: MakeRustlsConnect::new(rustls),
            verify,
        })
    }

    /// The driver's settings (hosts, user, database, timeouts, TLS mode).
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The driver's settings, to change before connecting.
    pub fn config_mut(&mut self) -> &mut Config {
        &mut self.config
    }

    /// How the server's certificate is checked.
    pub fn verify(&self) -> Verify {
        self.verify
    }

    /// The TLS connector for [`Config::connect`] and pools.
    pub fn tls(&self) -> MakeRustlsConnect {
        self.tls.clone()
    }

    /// Opens one connection and drives it on a task of its own; the
    /// connection ends when the returned client is dropped.
    pub async fn connect(&self) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
        let (client, connection) = self.config.connect(self.tls()).await?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "PostgreSQL connection ended");
            }
        });
        Ok(client)
    }

    /// A deadpool manager with these settings.
    pub fn manager(&self, manager: ManagerConfig) -> Manager {
        Manager::from_config(self.config.clone(), self.tls(), manager)
    }

    /// A pool of up to `max_size` connections with these settings (for the
    /// toolkit's request ledger and job facts; the server's store sizes
    /// and times its own). A closed connection is not handed out again.
    pub fn pool(&self, max_size: usize) -> Result<Pool, PgError> {
        let manager = self.manager(ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        });
        Pool::builder(manager)
            .max_size(max_size)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .create_timeout(Some(
                self.config
                    .get_connect_timeout()
                    .copied()
                    .unwrap_or(DEFAULT_CONNECT_TIMEOUT),
            ))
            .build()
            .map_err(|e| PgError::new(format!("pool: {e}")))
    }
}

/// Whether every host `conn` names is on this machine: a Unix socket,
/// `localhost` or a loopback address (`hostaddr`, when given, is what is
/// connected to). A string that names no host, or does not parse, is not:
/// nothing is known of where it leads.
pub fn is_on_this_machine(conn: &str) -> bool {
    // Only the hosts are read: the other parameters (onceq's own
    // `pool_size`, say, which the driver would refuse) are dropped.
    let Ok(split) = params::take(conn, &["host", "hostaddr"]) else {
        return false;
    };
    let mut hosts_only = match params::is_url(conn) {
        true => split.rest.split('?').next().unwrap_or_default().to_owned(),
        false => String::new(),
    };
    for (key, value) in &split.taken {
        hosts_only = params::append(&hosts_only, key, value);
    }
    let Ok(config) = Config::from_str(&hosts_only) else {
        return false;
    };
    if !config.get_hostaddrs().is_empty() {
        return config.get_hostaddrs().iter().all(|a| a.is_loopback());
    }
    let hosts = config.get_hosts();
    !hosts.is_empty()
        && hosts.iter().all(|host| match host {
            tokio_postgres::config::Host::Unix(_) => true,
            tokio_postgres::config::Host::Tcp(name) => {
                name.eq_ignore_ascii_case("localhost")
                    || name
                        .trim_matches(['[', ']'])
                        .parse::<std::net::IpAddr>()
                        .is_ok_and(|a| a.is_loopback())
            }
        })
}

/// `conn` with the TLS parameters of `defaults` added where it does not set
/// them itself (as libpq lets a connection string override `PGSSLMODE` and
/// the like): how the CLI's `--db-sslmode`-style flags reach every
/// connection.
pub fn with_defaults(conn: &str, defaults: &TlsParams) -> Result<String, PgError> {
    if *defaults == TlsParams::default() {
        return Ok(conn.to_owned());
    }
    let present = params::take(conn, tls::KEYS)?;
    let mut out = conn.to_owned();
    let given = [
        ("sslmode", &defaults.sslmode),
        ("sslrootcert", &defaults.sslrootcert),
        ("sslcert", &defaults.sslcert),
        ("sslkey", &defaults.sslkey),
    ];
    for (key, value) in given {
        if let Some(value) = value
            && !present.taken.iter().any(|(k, _)| k == key)
        {
            out = params::append(&out, key, value);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_this_machine_means_every_host_is_loopback_or_a_socket() {
        for local in [
            "postgres://u@127.0.0.1:5432/db?pool_size=32&pgbouncer=transaction",
            "postgres:///db?host=/var/run/postgresql",
            "postgres://u@localhost/db?sslmode=require",
            "postgres://u@[::1]:5432/db",
            "postgres://u@127.0.0.2,localhost/db",
            "postgres://u@%2Fvar%2Frun%2Fpostgresql/db",
            "host=/tmp dbname=db",
            "host=db.internal hostaddr=127.0.0.1 dbname=db",
        ] {
            assert!(is_on_this_machine(local), "{local}");
        }
        for remote in [
            "postgres://u@db.internal/db",
            "postgres://u@10.0.0.5:5432/db?pool_size=32",
            "postgres://u@localhost,db.internal/db",
            "host=localhost hostaddr=10.0.0.5 dbname=db",
            "dbname=db",
            "not a connection string '",
        ] {
            assert!(!is_on_this_machine(remote), "{remote}");
        }
    }

    #[test]
    fn the_string_wins_over_the_defaults() {
        let defaults = TlsParams {
            sslmode: Some("verify-full".into()),
            sslrootcert: Some("/etc/ca.pem".into()),
            ..TlsParams::default()
        };
        assert_eq!(
            with_defaults("postgres://h/db?sslmode=require", &defaults).unwrap(),
            "postgres://h/db?sslmode=require&sslrootcert=/etc/ca.pem"
        );
        assert_eq!(
            with_defaults("host=h", &TlsParams::default()).unwrap(),
            "host=h"
        );
    }

    #[test]
    fn unset_timeouts_get_ours_and_set_ones_stay() {
        let pg = PgConnect::parse("postgres://h/db").unwrap();
        assert_eq!(
            pg.config().get_connect_timeout(),
            Some(&DEFAULT_CONNECT_TIMEOUT)
        );
        assert_eq!(pg.config().get_keepalives_idle(), KEEPALIVES_IDLE);
        assert_eq!(pg.config().get_application_name(), Some("onceq"));
        let pg = PgConnect::parse("postgres://h/db?connect_timeout=2&application_name=x").unwrap();
        assert_eq!(
            pg.config().get_connect_timeout(),
            Some(&Duration::from_secs(2))
        );
        assert_eq!(pg.config().get_application_name(), Some("x"));
    }

    #[test]
    fn refused_parameters_say_why() {
        let e = PgConnect::parse("postgres://h/db?sslpassword=x").unwrap_err();
        assert!(e.to_string().starts_with("sslpassword: encrypted"), "{e}");
        let e = PgConnect::parse("postgres://h/db?sslmode=bogus").unwrap_err();
        assert!(e.to_string().contains("bogus"), "{e}");
    }
}

// The README's example, compiled and run by `cargo test --doc`.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
