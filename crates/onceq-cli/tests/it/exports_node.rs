//! The seed's app rebuilt on the npm package (`examples/exports-node`), run
//! as a user runs it: `node api.mjs` and `node worker.mjs` against a real
//! `onceq serve` on PostgreSQL and an application database, both from the
//! suite's throwaway cluster. The story: refusals (no key, a bad body), a
//! double tap, the same key with another body (422), the worker SIGKILLed
//! while it builds an export and started again — and then exactly one
//! export per key.
//!
//! [`App`] and [`Story`] are shared with `node_tarball`, which runs a
//! smaller story from the packed tarball installed in a scratch project.

use std::{
    collections::BTreeMap,
    fs::OpenOptions,
    path::PathBuf,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use crate::node_package;
use crate::process::ServerProcess;

/// How long any one thing may take to happen before the test gives up.
const WITHIN: Duration = Duration::from_secs(60);

pub fn example_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/exports-node")
}

/// The app's scripts in `dir`, with the environment both processes share.
pub struct App {
    pub dir: PathBuf,
    pub env: Vec<(String, String)>,
    pub logs: tempfile::TempDir,
}

/// A running `node <script>`; killed (SIGKILL) when dropped.
pub struct NodeProc {
    child: Child,
    pub log: PathBuf,
}

impl Drop for NodeProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl NodeProc {
    /// SIGKILL, and wait for it to be gone.
    pub fn kill9(mut self) {
        self.child.kill().expect("kill -9");
        self.child.wait().expect("reap");
    }

    /// Everything it logged so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn assert_running(&mut self) {
        if let Ok(Some(status)) = self.child.try_wait() {
            panic!(
                "{} exited ({status}):\n{}",
                self.log.display(),
                self.log_text()
            );
        }
    }
}

impl App {
    /// The app in `dir` on `server` and the application database `db_url`.
    pub fn new(dir: PathBuf, server: &ServerProcess, key: &str, db_url: &str) -> App {
        App {
            dir,
            env: vec![
                ("DATABASE_URL".into(), db_url.into()),
                ("ONCEQ_URL".into(), server.url.clone()),
                ("ONCEQ_API_KEY".into(), key.into()),
            ],
            logs: tempfile::tempdir().unwrap(),
        }
    }

    /// `node <script>` with the shared environment and `extra`, its output
    /// appended to `<name>.log`.
    pub fn spawn(&self, script: &str, name: &str, extra: &[(&str, &str)]) -> NodeProc {
        let log = self.logs.path().join(format!("{name}.log"));
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .unwrap();
        let mut cmd = Command::new("node");
        cmd.arg(script)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(file.try_clone().unwrap())
            .stderr(file);
        for k in [
            "DATABASE_URL",
            "ONCEQ_URL",
            "ONCEQ_API_KEY",
            "LISTEN",
            "EXPORTS_UNSAFE_SKIP_LEDGER",
            "EXPORTS_UNSAFE_NAIVE_WORKER",
        ] {
            cmd.env_remove(k);
        }
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        cmd.envs(extra.iter().copied());
        let child = cmd.spawn().expect("node must be installed");
        NodeProc { child, log }
    }

    /// `node api.mjs` listening on a free port; returns it and its base URL.
    pub fn start_api(&self) -> (NodeProc, String) {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let listen = format!("127.0.0.1:{port}");
        let mut api = self.spawn(
            "api.mjs",
            "api",
            &[("LISTEN", &listen), ("EXPORTS_LEASE_SECS", "5")],
        );
        let start = Instant::now();
        while std::net::TcpStream::connect(&listen).is_err() {
            api.assert_running();
            assert!(
                start.elapsed() < WITHIN,
                "the api did not listen:\n{}",
                api.log_text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        (api, format!("http://{listen}"))
    }
}

/// One answer of the route.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub replayed: bool,
    pub retry_after: Option<String>,
    pub body: Value,
}

/// Calls of the story against the route at `base`.
pub struct Story {
    pub base: String,
    http: reqwest::Client,
}

impl Story {
    pub fn new(base: String) -> Story {
        Story {
            base,
            http: reqwest::Client::new(),
        }
    }

    /// `POST /api/exports` with `key` (none if `None`) and a JSON `body`.
    pub async fn post(&self, key: Option<&str>, body: &Value) -> Answer {
        let mut req = self
            .http
            .post(format!("{}/api/exports", self.base))
            .json(body);
        if let Some(k) = key {
            req = req.header("Idempotency-Key", k);
        }
        let res = req.send().await.expect("the api answers");
        let header = |n: &str| res.headers().get(n).map(|v| v.to_str().unwrap().to_owned());
        let replayed = header("idempotent-replayed").as_deref() == Some("true");
        let retry_after = header("retry-after");
        let status = res.status().as_u16();
        let text = res.text().await.unwrap();
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        Answer {
            status,
            replayed,
            retry_after,
            body,
        }
    }

    /// Sends until the route answers 202 (a 409 in flight waits for its
    /// Retry-After, as a client does); the 202's `message_id`.
    pub async fn until_accepted(&self, key: &str, body: &Value) -> (String, Answer) {
        let start = Instant::now();
        loop {
            let a = self.post(Some(key), body).await;
            match a.status {
                202 => {
                    assert_eq!(a.body["status"], "queued", "{a:?}");
                    let id = a.body["message_id"]
                        .as_str()
                        .expect("a message_id")
                        .to_owned();
                    return (id, a);
                }
                409 => {
                    assert_eq!(a.body["error"]["code"], "REQUEST_IN_FLIGHT", "{a:?}");
                    let secs: u64 = a
                        .retry_after
                        .as_deref()
                        .expect("Retry-After")
                        .parse()
                        .unwrap();
                    assert!(secs >= 1, "{a:?}");
                }
                _ => panic!("unexpected answer for {key}: {a:?}"),
            }
            assert!(start.elapsed() < WITHIN, "no 202 for {key}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// The refusals: no key (400), a body that is not the seed's (400), the
    /// same key with another body (422, after `key` was accepted with
    /// another body).
    pub async fn refusals(&self, used_key: &str) {
        let body = json!({"tenant": "acme", "format": "csv"});
        let a = self.post(None, &body).await;
        assert_eq!(a.status, 400, "{a:?}");
        assert_eq!(a.body["error"]["code"], "IDEMPOTENCY_KEY_REQUIRED", "{a:?}");
        let a = self.post(Some("bad-body"), &json!({"tenant": 7})).await;
        assert_eq!(a.status, 400, "{a:?}");
        assert!(
            a.body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("tenant"),
            "{a:?}"
        );
        let a = self
            .post(Some(used_key), &json!({"tenant": "acme", "format": "xlsx"}))
            .await;
        assert_eq!(a.status, 422, "{a:?}");
        assert_eq!(a.body["error"]["code"], "IDEMPOTENCY_KEY_REUSED", "{a:?}");
    }

    /// The seed's double tap: `key` sent twice at once, then once more. Every
    /// 202 names the same message; the last one is a replay.
    pub async fn double_tap(&self, key: &str, body: &Value) -> String {
        let (a, b) = tokio::join!(
            self.until_accepted(key, body),
            self.until_accepted(key, body)
        );
        assert_eq!(a.0, b.0, "a double tap queued two messages: {a:?} {b:?}");
        let (again, answer) = self.until_accepted(key, body).await;
        assert_eq!(again, a.0);
        assert!(
            answer.replayed,
            "a retry after the 202 is a replay: {answer:?}"
        );
        a.0
    }
}

/// `SELECT job_fact, count(*) FROM exports`.
pub async fn exports_by_fact(db: &tokio_postgres::Client) -> BTreeMap<String, i64> {
    db.query(
        "SELECT job_fact, count(*) FROM exports GROUP BY job_fact",
        &[],
    )
    .await
    .map(|rows| rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    .unwrap_or_default()
}

/// Waits until the queue holds nothing (every message acked) and `facts`
/// each have an export; returns the exports by fact.
pub async fn drained(
    db: &tokio_postgres::Client,
    server: &ServerProcess,
    key: &str,
    facts: &[String],
) -> BTreeMap<String, i64> {
    let http = reqwest::Client::new();
    let start = Instant::now();
    loop {
        let stats: Value = http
            .get(format!("{}/v1/queue/stats/api-enqueue-jobs", server.url))
            .bearer_auth(key)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let left = ["available", "delayed", "in_flight"]
            .iter()
            .map(|f| stats["data"][f].as_i64().unwrap_or(0))
            .sum::<i64>();
        let built = exports_by_fact(db).await;
        if left == 0 && facts.iter().all(|f| built.contains_key(f)) {
            return built;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the queue did not drain: {stats} / {built:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Connects to the application database.
pub async fn connect(url: &str) -> tokio_postgres::Client {
    let (db, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    db
}

/// The worker's environment: work long enough to be killed in, short
/// leases so the restarted worker takes the job over soon.
pub const SLOW_WORKER: &[(&str, &str)] = &[
    ("EXPORTS_WORK_MS", "3000"),
    ("WORKER_VISIBILITY_SECS", "2"),
    ("WORKER_FACT_LEASE_SECS", "2"),
    ("WORKER_HEARTBEAT_MS", "500"),
    ("WORKER_CONCURRENCY", "4"),
    ("EXPORTS_LOG", "debug"),
];

/// Ensures the example's dependencies (the package by path, pg, express)
/// and a built package.
fn prepare_example() -> PathBuf {
    node_package::build_package();
    let dir = example_dir();
    node_package::ensure_node_modules(&dir);
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_node_exports_app_builds_one_export_per_key_through_a_worker_crash() {
    let _package = node_package::PACKAGE.lock().await;
    let dir = prepare_example();
    let queue_db = onceq_testdb::fresh_database().await;
    let app_db = onceq_testdb::fresh_database().await;
    let key = "exports-node-key";
    let server = ServerProcess::on_postgres(&queue_db.url, key, &[]);
    let app = App::new(dir, &server, key, &app_db.url);
    let db = connect(&app_db.url).await;

    let (_api, base) = app.start_api();
    let worker = app.spawn("worker.mjs", "worker", SLOW_WORKER);
    let story = Story::new(base);

    let body = json!({"tenant": "acme", "format": "csv"});
    let first = story.double_tap("exp_acme", &body).await;
    story.refusals("exp_acme").await;
    let (second, _) = story
        .until_accepted("exp_globex", &json!({"tenant": "globex", "format": "json"}))
        .await;
    assert_ne!(first, second);

    // Kill the worker while it builds an export: its fact is `running` and
    // no row of it is committed.
    let start = Instant::now();
    let killed_fact: String = loop {
        let running = db
            .query(
                "SELECT fact FROM onceq_job_facts WHERE state = 'running' ORDER BY fact LIMIT 1",
                &[],
            )
            .await
            .ok()
            .and_then(|rows| rows.first().map(|r| r.get(0)));
        if let Some(fact) = running {
            break fact;
        }
        assert!(
            start.elapsed() < WITHIN,
            "no job started:\n{}",
            worker.log_text()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let first_log = worker.log.clone();
    worker.kill9();
    assert!(
        !exports_by_fact(&db).await.contains_key(&killed_fact),
        "the killed job's export was committed before the kill"
    );

    // Started again, it takes the killed job over once the leases run out.
    let worker = app.spawn("worker.mjs", "worker-again", SLOW_WORKER);
    let facts = ["export:exp_acme".to_owned(), "export:exp_globex".to_owned()];
    let built = drained(&db, &server, key, &facts).await;
    let one_each: BTreeMap<String, i64> = facts.iter().map(|f| (f.clone(), 1)).collect();
    assert_eq!(built, one_each, "not exactly one export per key");

    let row = db
        .query_one(
            "SELECT state, attempts FROM onceq_job_facts WHERE fact = $1",
            &[&killed_fact],
        )
        .await
        .unwrap();
    assert_eq!(row.get::<_, String>(0), "done");
    assert!(
        row.get::<_, i32>(1) >= 2,
        "the killed job was not taken over"
    );
    let log = worker.log_text();
    assert!(
        log.contains("job settled") && log.contains("outcome=done"),
        "the restarted worker logged no settled job:\n{log}\n(before the kill:\n{})",
        std::fs::read_to_string(first_log).unwrap_or_default()
    );
    drop(worker);
}
