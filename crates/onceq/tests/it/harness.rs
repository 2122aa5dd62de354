//! A real queue server and a real application database for one test.
//!
//! Time is manual and shared: the server and the toolkit read one clock;
//! [`Env::advance`] moves it and runs the server's lease reaper, so lease
//! expiry and takeovers are tested without sleeping.

#![allow(dead_code)]

use std::{str::FromStr, time::Duration};

use jiff::{SignedDuration, Timestamp};
use onceq_server::{AppState, ServerConfig, maintenance};

/// The time every test starts at.
pub const START: &str = "2026-07-26T12:00:00Z";

/// A running queue server plus an application database.
pub struct Env {
    /// Base URL of the queue server.
    pub queue_url: String,
    /// A key of project `app`.
    pub api_key: String,
    /// The server's state (its store, its clock).
    pub server: AppState,
    /// The clock the server and the toolkit share.
    pub clock: onceq::clock::Clock,
    /// The application's PostgreSQL database.
    pub app_db_url: String,
    /// A pool on it.
    pub pool: deadpool_postgres::Pool,
    _queue_dir: tempfile::TempDir,
    _app_db: onceq_testdb::TestDatabase,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Env {
    /// Starts a server on the embedded store and makes an app database.
    pub async fn start() -> Self {
        let start: Timestamp = START.parse().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let store = onceq_store::open(None, dir.path()).await.unwrap();
        let (key, _) = onceq_server::auth::create_key(store.as_ref(), "app", None, start)
            .await
            .unwrap();
        let clock = onceq::clock::Clock::manual(start);
        let state = AppState::new(store, ServerConfig::default()).with_clock(clock.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let run_state = state.clone();
        tokio::spawn(async move {
            onceq_server::serve::run(listener, run_state, async {
                let _ = rx.await;
            })
            .await
            .unwrap();
        });
        let app_db = onceq_testdb::fresh_database().await;
        let pool = pool(&app_db.url);
        Self {
            queue_url: format!("http://{addr}"),
            api_key: key.secret,
            server: state,
            clock,
            app_db_url: app_db.url.clone(),
            pool,
            _queue_dir: dir,
            _app_db: app_db,
            stop: Some(tx),
        }
    }

    /// A client of the queue server with quick retries.
    pub fn client(&self) -> onceq::Client {
        onceq::Client::new(&self.queue_url, &self.api_key)
            .unwrap()
            .with_retry(onceq::RetryPolicy {
                max_attempts: 3,
                base_delay: Duration::from_millis(10),
                max_delay: Duration::from_millis(50),
            })
    }

    /// Moves the clock forward and lets the server return expired leases.
    pub async fn advance(&self, secs: i64) {
        self.clock.advance(SignedDuration::from_secs(secs));
        maintenance::lease_reaper::pass(&self.server).await.unwrap();
    }

    /// Counts rows of a query returning one bigint.
    pub async fn count(&self, sql: &str) -> i64 {
        let c = self.pool.get().await.unwrap();
        c.query_one(sql, &[]).await.unwrap().get(0)
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }
}

/// A small pool on a PostgreSQL URL.
pub fn pool(url: &str) -> deadpool_postgres::Pool {
    pool_of(url, 8)
}

/// A pool of `size` connections on a PostgreSQL URL.
pub fn pool_of(url: &str, size: usize) -> deadpool_postgres::Pool {
    let config = tokio_postgres::Config::from_str(url).unwrap();
    let manager = deadpool_postgres::Manager::new(config, tokio_postgres::NoTls);
    deadpool_postgres::Pool::builder(manager)
        .max_size(size)
        .build()
        .unwrap()
}
