//! Starts a real server on 127.0.0.1:0 over a real store, with a manual
//! clock, and gives tests a small JSON client.
//!
//! The client's requests go over the socket, or, for a server started with
//! [`TestServer::in_process`], straight into the server's router
//! (`app(state)` with `tower::ServiceExt::oneshot`): the same handlers,
//! layers and state, without TCP and HTTP parsing. Tests where the socket
//! or the process is the subject (hostile clients, SIGTERM, long polls
//! over a real client, the browser) use the socket, through the client's
//! `http` and `url` if not through these helpers.

use std::{net::SocketAddr, sync::Arc, time::Duration};

use jiff::Timestamp;
use onceq_server::{AppState, ServerConfig, clock::Clock, maintenance, pricing::PriceTable};
use onceq_store::Store;
use serde_json::Value;

pub use crate::answer::Res;
use crate::answer::in_process;

/// Which backend a test runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// Generates `sqlite` and `postgres` tests from one `async fn(Backend)`.
#[macro_export]
macro_rules! both {
    ($name:ident) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                super::$name($crate::harness::Backend::Sqlite).await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                super::$name($crate::harness::Backend::Postgres).await
            }
        }
    };
}

/// A store and what keeps it alive.
pub struct StoreHandle {
    pub store: Arc<dyn Store>,
    pub database_url: Option<String>,
    _dir: Option<tempfile::TempDir>,
}

/// A connection of the test's own to a store's PostgreSQL database (for
/// SQL the API does not offer: locks, rows written by hand, what a
/// statement left behind).
pub async fn sql_client(database_url: &str) -> tokio_postgres::Client {
    let (db, connection) = tokio_postgres::connect(database_url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    db
}

/// Opens a fresh store of the given backend.
pub async fn fresh_store(backend: Backend) -> StoreHandle {
    match backend {
        Backend::Sqlite => {
            let dir = tempfile::tempdir().unwrap();
            let store = onceq_store::open(None, dir.path()).await.unwrap();
            StoreHandle {
                store,
                database_url: None,
                _dir: Some(dir),
            }
        }
        Backend::Postgres => {
            // A copy of a template migrated once per test process.
            let db = onceq_testdb::database_from_template("onceq", |url| async move {
                onceq_store::postgres::PgStore::migrate(&url).await.unwrap()
            })
            .await;
            let store = onceq_store::open(Some(&db.url), std::path::Path::new("unused"))
                .await
                .unwrap();
            StoreHandle {
                store,
                database_url: Some(db.url),
                _dir: None,
            }
        }
    }
}

/// A running server.
pub struct TestServer {
    pub addr: SocketAddr,
    pub state: AppState,
    pub clock: Clock,
    /// A key of project `alpha`.
    pub key: String,
    /// A key of project `beta`.
    pub other_key: String,
    pub http: reqwest::Client,
    /// Set by [`TestServer::in_process`]: requests of the helpers below go
    /// through it, not the socket.
    router: Option<axum::Router>,
    _store: Option<StoreHandle>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl TestServer {
    pub async fn start(backend: Backend) -> Self {
        Self::start_with(backend, ServerConfig::default()).await
    }

    pub async fn start_with(backend: Backend, config: ServerConfig) -> Self {
        let handle = fresh_store(backend).await;
        let store = handle.store.clone();
        let mut server = Self::on_store(store, config).await;
        server._store = Some(handle);
        server
    }

    /// Two servers on one fresh PostgreSQL database, each on a store of its
    /// own (its own pool and notification listener), as two hosts would be;
    /// the handle keeps the database for the test's length.
    pub async fn two_on_one_database(
        config: impl Fn() -> ServerConfig,
    ) -> (StoreHandle, Self, Self) {
        let handle = fresh_store(Backend::Postgres).await;
        let url = handle.database_url.clone().unwrap();
        let a = Self::on_store(handle.store.clone(), config()).await;
        let second = onceq_store::open(Some(&url), std::path::Path::new("unused"))
            .await
            .unwrap();
        let b = Self::on_store(second, config()).await;
        (handle, a, b)
    }

    /// A server over an existing store (e.g. a second server on one database).
    pub async fn on_store(store: Arc<dyn Store>, config: ServerConfig) -> Self {
        Self::on_store_at(store, config, Self::T0.parse().unwrap()).await
    }

    /// Where every test server's clock starts.
    pub const T0: &str = "2026-07-26T12:00:00Z";

    /// A server over an existing store whose clock starts at `start`.
    pub async fn on_store_at(
        store: Arc<dyn Store>,
        config: ServerConfig,
        start: Timestamp,
    ) -> Self {
        Self::on_store_with_clock(store, config, Clock::manual(start)).await
    }

    /// A server on a fresh store reading `clock` (the system clock for
    /// the tests that measure real lateness: tests/it/fair_share).
    pub async fn start_with_clock(backend: Backend, config: ServerConfig, clock: Clock) -> Self {
        let handle = fresh_store(backend).await;
        let mut server = Self::on_store_with_clock(handle.store.clone(), config, clock).await;
        server._store = Some(handle);
        server
    }

    async fn on_store_with_clock(
        store: Arc<dyn Store>,
        config: ServerConfig,
        clock: Clock,
    ) -> Self {
        let now = clock.now();
        let (key, _) = onceq_server::auth::create_key(store.as_ref(), "alpha", None, now)
            .await
            .unwrap();
        let (other, _) = onceq_server::auth::create_key(store.as_ref(), "beta", None, now)
            .await
            .unwrap();
        // The server closes a keep-alive connection that sends no headers
        // within `header_read_timeout` (300 ms in the slow-loris tests); a
        // client reusing one just as it closes gets `IncompleteMessage`.
        // Pooled connections are dropped well before that.
        let pool_idle = config.header_read_timeout / 2;
        let state = AppState::new(store, config).with_clock(clock.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let run_state = state.clone();
        let task = tokio::spawn(async move {
            onceq_server::serve::run(listener, run_state, async {
                let _ = rx.await;
            })
            .await
            .unwrap();
        });
        Self {
            addr,
            state,
            clock,
            key: key.secret,
            other_key: other.secret,
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(60))
                .pool_idle_timeout(pool_idle)
                .build()
                .unwrap(),
            router: None,
            _store: None,
            stop: Some(tx),
            task: Some(task),
        }
    }

    /// A server whose helpers' requests go in-process (see the module doc).
    pub async fn in_process(backend: Backend) -> Self {
        Self::in_process_with(backend, ServerConfig::default()).await
    }

    /// [`TestServer::in_process`] with `config`.
    pub async fn in_process_with(backend: Backend, config: ServerConfig) -> Self {
        let mut server = Self::start_with(backend, config).await;
        server.router = Some(onceq_server::app(server.state.clone()));
        server
    }

    /// Shuts the server down as SIGTERM would and waits until it has
    /// stopped: no request served, no background task left running.
    pub async fn stop(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.unwrap();
        }
    }

    /// The PostgreSQL database the server's store is on (`None` on
    /// SQLite, or for a server on a store the test opened itself).
    pub fn database_url(&self) -> Option<&str> {
        self._store.as_ref()?.database_url.as_deref()
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The price table given (for cost tests).
    pub fn priced() -> ServerConfig {
        ServerConfig {
            prices: PriceTable::parse("queue.publish=0.00002,queue.publish_batch=0.00002").unwrap(),
            ..ServerConfig::default()
        }
    }

    /// A config whose account sync runs only when a test calls
    /// [`TestServer::sync`] (and once at start).
    pub fn manual_sync(config: ServerConfig) -> ServerConfig {
        ServerConfig {
            account_sync_interval: Duration::from_secs(3600),
            ..config
        }
    }

    /// One account sync pass: writes usage, heartbeat, re-reads limits.
    pub async fn sync(&self) {
        maintenance::account_sync::pass(&self.state).await.unwrap();
    }

    /// A new key of `project` limited to `actions` on `queues`.
    pub async fn scoped_key(&self, project: &str, actions: &str, queues: &str) -> String {
        let scope = onceq_types::scope::KeyScope {
            actions: onceq_types::scope::Actions::parse(actions).unwrap(),
            queues: onceq_types::scope::QueuePatterns::parse(queues).unwrap(),
        };
        let (key, _) = onceq_server::auth::create_scoped_key(
            self.state.store().as_ref(),
            project,
            None,
            scope,
            None,
            self.clock.now(),
        )
        .await
        .unwrap();
        key.secret
    }

    /// The public id of a secret key.
    pub async fn key_id(&self, secret: &str) -> String {
        let hash = onceq_server::auth::key_hash(secret);
        self.state
            .store()
            .key_lookup(&hash)
            .await
            .unwrap()
            .unwrap()
            .key_id
    }

    /// POST a JSON body with `key`.
    pub async fn post_as(&self, key: &str, path: &str, body: Value) -> Res {
        self.send(reqwest::Method::POST, path, Some(body), Some(key))
            .await
    }

    /// GET with `key`.
    pub async fn get_as(&self, key: &str, path: &str) -> Res {
        self.send(reqwest::Method::GET, path, None, Some(key)).await
    }

    /// POST a JSON body with the project-alpha key.
    pub async fn post(&self, path: &str, body: Value) -> Res {
        self.send(reqwest::Method::POST, path, Some(body), Some(&self.key))
            .await
    }

    /// GET with the project-alpha key.
    pub async fn get(&self, path: &str) -> Res {
        self.send(reqwest::Method::GET, path, None, Some(&self.key))
            .await
    }

    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
        key: Option<&str>,
    ) -> Res {
        if let Some(router) = &self.router {
            let body = body.map(|b| serde_json::to_vec(&b).unwrap());
            return in_process(router, method, path, body, key).await;
        }
        let mut req = self.http.request(method, self.url(path));
        if let Some(key) = key {
            req = req.bearer_auth(key);
        }
        if let Some(body) = body {
            req = req.json(&body);
        }
        Res::from(req.send().await.unwrap()).await
    }

    /// A request with the project-alpha key and more headers
    /// (`Idempotency-Key`, …).
    pub async fn send_with(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
        headers: &[(&str, &str)],
    ) -> Res {
        self.send_as_with(&self.key, method, path, body, headers)
            .await
    }

    /// [`Self::send_with`] with another key.
    pub async fn send_as_with(
        &self,
        key: &str,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
        headers: &[(&str, &str)],
    ) -> Res {
        if let Some(router) = &self.router {
            let body = body.map(|b| serde_json::to_vec(&b).unwrap());
            return crate::answer::in_process_with(router, method, path, body, Some(key), headers)
                .await;
        }
        let mut req = self.http.request(method, self.url(path)).bearer_auth(key);
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        if let Some(body) = body {
            req = req.json(&body);
        }
        Res::from(req.send().await.unwrap()).await
    }

    /// POST raw bytes (malformed bodies).
    pub async fn post_raw(&self, path: &str, body: impl Into<reqwest::Body>) -> Res {
        if let Some(router) = &self.router {
            let body = body.into().as_bytes().expect("a body in memory").to_vec();
            let key = Some(self.key.as_str());
            return in_process(router, reqwest::Method::POST, path, Some(body), key).await;
        }
        let req = self
            .http
            .post(self.url(path))
            .bearer_auth(&self.key)
            .header("content-type", "application/json")
            .body(body);
        Res::from(req.send().await.unwrap()).await
    }

    /// Publishes `payload` to `queue` and returns the message id.
    pub async fn publish(&self, queue: &str, payload: Value) -> String {
        let r = self
            .post(
                "/v1/queue/publish",
                serde_json::json!({"queue": queue, "payload": payload}),
            )
            .await;
        r.ok();
        r.data()["message_id"].as_str().unwrap().to_owned()
    }

    /// Publishes `messages` (a batch body's items) to `queue` in one batch,
    /// which must be stored.
    pub async fn publish_batch(&self, queue: &str, messages: &[Value]) {
        self.post(
            "/v1/queue/publish_batch",
            serde_json::json!({"queue": queue, "messages": messages}),
        )
        .await
        .ok();
    }

    /// Stats of a queue (alpha).
    pub async fn stats(&self, queue: &str) -> Value {
        let r = self.get(&format!("/v1/queue/stats/{queue}")).await;
        r.ok();
        r.data().clone()
    }

    /// Moves the clock and runs the lease reaper once.
    pub async fn expire_leases_after(&self, secs: i64) {
        self.clock.advance(jiff::SignedDuration::from_secs(secs));
        maintenance::lease_reaper::pass(&self.state).await.unwrap();
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }
}
