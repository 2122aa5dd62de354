//! The application under test: the seed's `POST /api/exports` (publishes to
//! the real queue with the request's key as the publish key), plus routes
//! that answer 400, 500, slowly, or echo the key, behind the layer.
//!
//! Over 400 lines: the app under test is one router; its routes are small and
//! read best together.

use std::{
    path::PathBuf,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
};

use axum::{
    Json, Router,
    body::Bytes,
    extract::State,
    http::StatusCode,
    response::{IntoResponse, Response},
    routing::{get, post},
};
use onceq::idempotency::{IdempotencyKey, IdempotencyLayer, Ledger, PgLedger, SqliteLedger};
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

use crate::harness::Env;

/// The queue the export route publishes to.
pub const QUEUE: &str = "api-enqueue-jobs";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Postgres,
    Sqlite,
}

/// What the handlers share with the test.
#[derive(Clone)]
pub struct Handlers {
    pub client: onceq::Client,
    /// Handler invocations, all routes.
    pub calls: Arc<AtomicUsize>,
    /// Every message id the export route got back from the queue.
    pub message_ids: Arc<Mutex<Vec<String>>>,
    /// The next this-many exports fail their publish (503), like a broker hiccup.
    pub fail_publishes: Arc<AtomicUsize>,
    /// The slow route says it has started…
    pub entered: Arc<tokio::sync::Notify>,
    /// …and waits for this before answering.
    pub gate: Arc<tokio::sync::Notify>,
}

impl Handlers {
    fn count(&self) -> usize {
        self.calls.fetch_add(1, Ordering::SeqCst) + 1
    }
}

async fn exports(
    State(h): State<Handlers>,
    key: IdempotencyKey,
    Json(mut body): Json<Value>,
) -> Response {
    h.count();
    let failing = h
        .fail_publishes
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok();
    if failing {
        let err = json!({"error": {"code": "PUBLISH_FAILED", "message": "broker hiccup"}});
        return (StatusCode::SERVICE_UNAVAILABLE, Json(err)).into_response();
    }
    body["job_fact"] = json!(format!("export:{key}"));
    let opts = onceq::PublishOptions {
        idempotency_key: Some(key.0.clone()),
        ..Default::default()
    };
    match h.client.publish(QUEUE, &body, opts).await {
        Ok(p) => {
            let id = p.message.message_id;
            h.message_ids.lock().unwrap().push(id.clone());
            let location = format!("/api/exports/{id}");
            let body = json!({"status": "queued", "message_id": id});
            (StatusCode::ACCEPTED, [("location", location)], Json(body)).into_response()
        }
        Err(e) => {
            let err = json!({"error": {"code": "PUBLISH_FAILED", "message": e.to_string()}});
            (StatusCode::SERVICE_UNAVAILABLE, Json(err)).into_response()
        }
    }
}

async fn bad(State(h): State<Handlers>) -> Response {
    h.count();
    let err = json!({"error": {"code": "INVALID_FORMAT", "message": "format must be csv or xlsx"}});
    (StatusCode::BAD_REQUEST, Json(err)).into_response()
}

async fn boom(State(h): State<Handlers>) -> Response {
    let n = h.count();
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        Json(json!({"error": {"code": "BOOM", "call": n}})),
    )
        .into_response()
}

async fn slow(State(h): State<Handlers>) -> Response {
    h.count();
    h.entered.notify_one();
    h.gate.notified().await;
    (StatusCode::ACCEPTED, Json(json!({"done": true}))).into_response()
}

/// Answers which call this was and the key it saw.
async fn echo(State(h): State<Handlers>, key: Option<IdempotencyKey>, _body: Bytes) -> Response {
    let n = h.count();
    (
        StatusCode::CREATED,
        Json(json!({"call": n, "key": key.map(|k| k.0)})),
    )
        .into_response()
}

/// Requires the key: on a route without the layer, the extractor refuses.
async fn needs_key(key: IdempotencyKey) -> String {
    key.0
}

fn router(h: Handlers, layer: IdempotencyLayer) -> Router {
    Router::new()
        .route("/api/exports", post(exports))
        .route("/api/bad", post(bad))
        .route("/api/boom", post(boom))
        .route("/api/slow", post(slow))
        .route("/api/notes", post(echo))
        .route("/api/comments", post(echo))
        .route("/api/health", get(|| async { "ok" }))
        .route_layer(layer)
        // added after route_layer: not behind the layer
        .route("/bare/key", post(needs_key))
        .with_state(h)
}

/// One running app.
pub struct TestApp {
    pub env: Arc<Env>,
    pub backend: Backend,
    /// The ledger as built (unwrapped).
    pub ledger: Arc<dyn Ledger>,
    pub h: Handlers,
    pub fail: onceq::failpoint::FailPoints,
    pub caller: Caller,
    sqlite_path: Option<PathBuf>,
    _dir: Arc<tempfile::TempDir>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.server.abort();
    }
}

type Wrap = Box<dyn FnOnce(Arc<dyn Ledger>) -> Arc<dyn Ledger>>;

impl TestApp {
    /// A fresh env and an app with the default layer.
    pub async fn start(backend: Backend) -> Self {
        Self::start_with(backend, |l| l).await
    }

    /// A fresh env and an app whose layer `configure` adjusts.
    pub async fn start_with(
        backend: Backend,
        configure: impl FnOnce(IdempotencyLayer) -> IdempotencyLayer,
    ) -> Self {
        Self::start_wrapped(backend, Box::new(|l| l), configure).await
    }

    /// Like `start_with`, with the layer's ledger wrapped by `wrap`.
    pub async fn start_wrapped(
        backend: Backend,
        wrap: Wrap,
        configure: impl FnOnce(IdempotencyLayer) -> IdempotencyLayer,
    ) -> Self {
        let env = Arc::new(Env::start().await);
        let dir = Arc::new(tempfile::tempdir().unwrap());
        let (ledger, sqlite_path): (Arc<dyn Ledger>, _) = match backend {
            Backend::Postgres => (
                Arc::new(PgLedger::new(env.pool.clone()).await.unwrap()),
                None,
            ),
            Backend::Sqlite => {
                let path = dir.path().join("ledger.db");
                (
                    Arc::new(SqliteLedger::open(&path).await.unwrap()),
                    Some(path),
                )
            }
        };
        Self::serve(env, backend, ledger, sqlite_path, dir, wrap, configure).await
    }

    /// Another app (own handlers and counters) on the same env and ledger.
    pub async fn sibling(
        &self,
        configure: impl FnOnce(IdempotencyLayer) -> IdempotencyLayer,
    ) -> Self {
        let (env, ledger, dir) = (self.env.clone(), self.ledger.clone(), self._dir.clone());
        Self::serve(
            env,
            self.backend,
            ledger,
            self.sqlite_path.clone(),
            dir,
            Box::new(|l| l),
            configure,
        )
        .await
    }

    async fn serve(
        env: Arc<Env>,
        backend: Backend,
        ledger: Arc<dyn Ledger>,
        sqlite_path: Option<PathBuf>,
        dir: Arc<tempfile::TempDir>,
        wrap: Wrap,
        configure: impl FnOnce(IdempotencyLayer) -> IdempotencyLayer,
    ) -> Self {
        let h = Handlers {
            client: env.client(),
            calls: Default::default(),
            message_ids: Default::default(),
            fail_publishes: Default::default(),
            entered: Default::default(),
            gate: Default::default(),
        };
        let fail = onceq::failpoint::FailPoints::new();
        let layer = IdempotencyLayer::new(wrap(ledger.clone()))
            .clock(env.clock.clone())
            .fail_points(fail.clone());
        let app = router(h.clone(), configure(layer));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self {
            env,
            backend,
            ledger,
            h,
            fail,
            caller: Caller {
                http: reqwest::Client::new(),
                url,
            },
            sqlite_path,
            _dir: dir,
            server,
        }
    }

    /// POST a JSON body with a key (or none), anonymously.
    pub async fn post(&self, path: &str, key: Option<&str>, body: &Value) -> Reply {
        self.caller.post(path, key, body).await
    }

    /// Handler invocations so far.
    pub fn calls(&self) -> usize {
        self.h.calls.load(Ordering::SeqCst)
    }

    /// Messages on the export queue.
    pub async fn queued(&self) -> i64 {
        self.env.client().stats(QUEUE).await.unwrap().message_count
    }

    /// Rows in the ledger table.
    pub async fn ledger_rows(&self) -> i64 {
        let sql = "SELECT count(*) FROM onceq_request_ledger";
        match &self.sqlite_path {
            None => self.env.count(sql).await,
            Some(path) => {
                let path = path.clone();
                tokio::task::spawn_blocking(move || {
                    let c = rusqlite::Connection::open(path).unwrap();
                    c.query_row(sql, [], |r| r.get(0)).unwrap()
                })
                .await
                .unwrap()
            }
        }
    }

    /// Makes the ledger's database fail for real: PostgreSQL loses its
    /// database (dropped, connections terminated); SQLite loses its table.
    pub async fn break_ledger(&self) {
        match &self.sqlite_path {
            None => {
                let name = self.env.app_db_url.rsplit('/').next().unwrap().to_owned();
                let admin_url = onceq_testdb::shared_cluster().await.admin_url();
                let (admin, conn) = tokio_postgres::connect(&admin_url, tokio_postgres::NoTls)
                    .await
                    .unwrap();
                tokio::spawn(conn);
                admin
                    .batch_execute(&format!("DROP DATABASE \"{name}\" WITH (FORCE)"))
                    .await
                    .unwrap();
            }
            Some(path) => {
                let path = path.clone();
                tokio::task::spawn_blocking(move || {
                    let c = rusqlite::Connection::open(path).unwrap();
                    c.execute_batch("DROP TABLE onceq_request_ledger").unwrap();
                })
                .await
                .unwrap();
            }
        }
    }
}

/// Calls the app over HTTP. Cheap to clone into spawned tasks.
#[derive(Clone)]
pub struct Caller {
    http: reqwest::Client,
    url: String,
}

impl Caller {
    pub async fn post(&self, path: &str, key: Option<&str>, body: &Value) -> Reply {
        self.send(
            path,
            key,
            None,
            "application/json",
            body.to_string().into_bytes(),
        )
        .await
    }

    /// POST as a caller (`Authorization` value) or anonymously.
    pub async fn post_as(
        &self,
        auth: Option<&str>,
        path: &str,
        key: Option<&str>,
        body: &Value,
    ) -> Reply {
        self.send(
            path,
            key,
            auth,
            "application/json",
            body.to_string().into_bytes(),
        )
        .await
    }

    /// POST raw bytes with a content type.
    pub async fn send(
        &self,
        path: &str,
        key: Option<&str>,
        auth: Option<&str>,
        ct: &str,
        body: Vec<u8>,
    ) -> Reply {
        let mut req = self
            .http
            .post(format!("{}{path}", self.url))
            .header("content-type", ct)
            .body(body);
        if let Some(k) = key {
            req = req.header("idempotency-key", k);
        }
        if let Some(a) = auth {
            req = req.header("authorization", a);
        }
        Reply::from(req.send().await.unwrap()).await
    }

    pub async fn get(&self, path: &str) -> Reply {
        Reply::from(
            self.http
                .get(format!("{}{path}", self.url))
                .send()
                .await
                .unwrap(),
        )
        .await
    }
}

/// An answer, read whole.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub raw: Bytes,
}

impl Reply {
    async fn from(res: reqwest::Response) -> Self {
        Self {
            status: res.status().as_u16(),
            headers: res.headers().clone(),
            raw: res.bytes().await.unwrap(),
        }
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.raw).unwrap_or(Value::Null)
    }

    /// `error.code` of a refusal.
    pub fn code(&self) -> String {
        self.json()["error"]["code"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|v| v.to_str().unwrap())
    }

    pub fn replayed(&self) -> bool {
        self.header("idempotent-replayed") == Some("true")
    }

    pub fn message_id(&self) -> String {
        self.json()["message_id"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    pub fn call(&self) -> i64 {
        self.json()["call"].as_i64().unwrap_or(-1)
    }
}
