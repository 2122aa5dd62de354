//! The example's two processes, as users run them, against a real onceq
//! server and a real PostgreSQL: the seed's curl story, then a worker killed
//! with SIGKILL mid-stream and started again — one export per request.

use std::{
    process::{Child, Command, Stdio},
    time::Duration,
};

use serde_json::{Value, json};

struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(role: &str, env: &[(&str, String)]) -> Proc {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_exports"));
    cmd.arg(role).stdout(Stdio::null()).stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    Proc(cmd.spawn().expect("spawn exports"))
}

async fn start_queue_server() -> (
    String,
    String,
    tokio::sync::oneshot::Sender<()>,
    tempfile::TempDir,
) {
    let dir = tempfile::tempdir().unwrap();
    let store = onceq_store::open(None, dir.path()).await.unwrap();
    let (key, _) = onceq_server::auth::create_key(
        store.as_ref(),
        "app",
        None,
        onceq_server::clock::Clock::System.now(),
    )
    .await
    .unwrap();
    let state = onceq_server::AppState::new(store, onceq_server::ServerConfig::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(onceq_server::serve::run(listener, state, async {
        let _ = rx.await;
    }));
    (url, key.secret, tx, dir)
}

async fn until<F: AsyncFnMut() -> bool>(what: &str, mut f: F) {
    for _ in 0..300 {
        if f().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seed_story_and_a_killed_worker() {
    let (queue_url, key, _stop, _dir) = start_queue_server().await;
    let db = onceq_testdb::fresh_database().await;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let env = vec![
        ("DATABASE_URL", db.url.clone()),
        ("ONCEQ_URL", queue_url.clone()),
        ("ONCEQ_API_KEY", key.clone()),
        ("LISTEN", format!("127.0.0.1:{port}")),
        ("WORKER_VISIBILITY_SECS", "2".into()),
        ("WORKER_FACT_LEASE_SECS", "2".into()),
    ];
    let _api = spawn("api", &env);
    let http = reqwest::Client::new();
    let api = format!("http://127.0.0.1:{port}/api/exports");
    let post = |k: String, body: Value| {
        let req = http.post(&api).header("Idempotency-Key", k).json(&body);
        async move {
            let r = req.send().await?;
            let replayed = r.headers().contains_key("idempotent-replayed");
            Ok::<_, reqwest::Error>((r.status().as_u16(), replayed, r.json::<Value>().await?))
        }
    };
    until("the api to listen", async || {
        post("probe".into(), json!({"tenant": "t", "format": "csv"}))
            .await
            .is_ok()
    })
    .await;

    // the seed's two POSTs: one job, the same answer
    let body = json!({"tenant": "acme", "format": "csv"});
    let (s1, r1, a) = post("exp_2026_07_26_acme".into(), body.clone())
        .await
        .unwrap();
    let (s2, r2, b) = post("exp_2026_07_26_acme".into(), body.clone())
        .await
        .unwrap();
    assert_eq!((s1, s2), (202, 202));
    assert_eq!(a, b);
    assert!(!r1 && r2, "the second answer is a replay");
    assert_eq!(a["status"], "queued");
    let (s3, _, _) = post(
        "exp_2026_07_26_acme".into(),
        json!({"tenant": "other", "format": "csv"}),
    )
    .await
    .unwrap();
    assert_eq!(s3, 422);
    let missing = http.post(&api).json(&body).send().await.unwrap();
    assert_eq!(missing.status(), 400);

    // more jobs, a worker killed while they flow, then a fresh one
    let keys: Vec<String> = (0..40).map(|i| format!("job-{i}")).collect();
    for k in &keys {
        let (s, _, _) = post(k.clone(), json!({"tenant": k, "format": "csv"}))
            .await
            .unwrap();
        assert_eq!(s, 202);
    }
    let mut worker = spawn("worker", &env);
    tokio::time::sleep(Duration::from_millis(300)).await;
    worker.0.kill().unwrap(); // SIGKILL
    let _ = worker.0.wait();
    let _worker = spawn("worker", &env);

    let app = onceq_testdb_pool(&db.url).await;
    until("every export to be built", async || {
        app.query_one("SELECT count(DISTINCT job_fact) FROM exports", &[])
            .await
            .map(|r| r.get::<_, i64>(0))
            .unwrap_or(0)
            == 42
    })
    .await;
    let rows = app
        .query(
            "SELECT job_fact, count(*) FROM exports GROUP BY job_fact HAVING count(*) > 1",
            &[],
        )
        .await
        .unwrap();
    assert!(
        rows.is_empty(),
        "duplicated exports: {:?}",
        rows.iter()
            .map(|r| r.get::<_, String>(0))
            .collect::<Vec<_>>()
    );
    let seed = app
        .query_one(
            "SELECT count(*) FROM exports WHERE job_fact = 'export:exp_2026_07_26_acme'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(seed.get::<_, i64>(0), 1);
}

async fn onceq_testdb_pool(url: &str) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    client
}
