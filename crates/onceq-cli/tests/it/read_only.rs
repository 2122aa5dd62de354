//! A write that lands on a read-only PostgreSQL — a standby, or a primary
//! fenced read-only during a switchover while a proxy or a pool still
//! points at it — is a retryable 503 with `Retry-After`, never a 500
//! INTERNAL (SQLSTATE 25006, "cannot execute INSERT in a read-only
//! transaction"); the connection is dropped, not handed out again, so the
//! next one finds the writable host; `/readyz` says not ready meanwhile; and
//! a server started on a read-only node says so.

use std::time::{Duration, Instant};

use onceq_testdb::{ClusterOptions, TestCluster};

use crate::process::{ServerProcess, onceq};

/// `(status, has Retry-After, body)` of a publish with `key`.
async fn publish(http: &reqwest::Client, server: &str, key: &str) -> (u16, bool, String) {
    let r = http
        .post(format!("{server}/v1/queue/publish"))
        .bearer_auth("ro-key")
        .header("Idempotency-Key", key)
        .json(&serde_json::json!({"queue": "jobs", "payload": {"key": key}}))
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .unwrap();
    let retry_after = r.headers().get("retry-after").is_some();
    (r.status().as_u16(), retry_after, r.text().await.unwrap())
}

async fn readyz(http: &reqwest::Client, server: &str) -> u16 {
    http.get(format!("{server}/readyz"))
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

async fn sql(url: &str, statements: &[&str]) {
    let client = onceq_pg::PgConnect::parse(url)
        .unwrap()
        .connect()
        .await
        .unwrap();
    for s in statements {
        client.batch_execute(s).await.unwrap();
    }
}

#[test]
fn a_write_on_a_read_only_primary_is_503_and_the_next_connection_finds_the_writable_host() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(fenced_then_switched());
}

async fn fenced_then_switched() {
    // A primary and its standby; the server given both, read-write wanted.
    let a = TestCluster::start_with_options(ClusterOptions::default()).await;
    let db = a.create_named_database("ro").await;
    let b = TestCluster::start_standby(&a, "b", ClusterOptions::default()).await;
    let url = format!(
        "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/{}?target_session_attrs=read-write&connect_timeout=2",
        a.port(),
        b.port(),
        db.name
    );
    let server = ServerProcess::on_postgres(&url, "ro-key", &[]);
    let http = reqwest::Client::new();
    // Warm the pool: several connections, all to A.
    for i in 0..20 {
        assert_eq!(
            publish(&http, &server.url, &format!("warm-{i}")).await.0,
            200
        );
    }

    // A is fenced read-only (as an operator or orchestrator demotes a
    // primary it cannot stop): the server's open connections stay on it.
    sql(
        &a.admin_url(),
        &[
            "ALTER SYSTEM SET default_transaction_read_only = on",
            "SELECT pg_reload_conf()",
        ],
    )
    .await;
    // The reload reaches the server's sessions shortly (each backend
    // rereads its settings on the postmaster's signal): until then
    // publishes still succeed on A, and B has them all.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut n = 0;
    let first = loop {
        let answer = publish(&http, &server.url, &format!("before-fence-{n}")).await;
        if answer.0 != 200 {
            break answer;
        }
        n += 1;
        assert!(Instant::now() < deadline, "the fence never took effect");
    };
    assert_eq!(
        first.0, 503,
        "the first publish on a read-only node: {}",
        first.2
    );
    // B is not promoted yet: nothing accepts writes.
    for i in 0..5 {
        let (status, retry_after, body) = publish(&http, &server.url, &format!("fenced-{i}")).await;
        assert_eq!(status, 503, "a publish on a read-only node: {body}");
        assert!(retry_after, "503 without Retry-After: {body}");
    }
    assert_eq!(
        readyz(&http, &server.url).await,
        503,
        "/readyz while only a read-only node is reachable"
    );

    // B promoted: the next connections skip A (read-only) and land on B.
    b.promote().await;
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut answers = Vec::new();
    loop {
        let (status, retry_after, body) = publish(&http, &server.url, "after").await;
        if status == 200 {
            break;
        }
        assert!(
            status == 503 && retry_after,
            "only 503 with Retry-After until B serves, got {status}: {body}"
        );
        answers.push(status);
        assert!(
            Instant::now() < deadline,
            "publishes never reached the promoted host: {answers:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Every pooled connection to A is gone, not only the one that failed:
    // a burst of publishes all succeed.
    let burst: Vec<_> = (0..40)
        .map(|i| {
            let (http, url) = (http.clone(), server.url.clone());
            tokio::spawn(async move { publish(&http, &url, &format!("burst-{i}")).await })
        })
        .collect();
    for b in burst {
        let (status, _, body) = b.await.unwrap();
        assert_eq!(status, 200, "a publish after the switch: {body}");
    }
    assert_eq!(readyz(&http, &server.url).await, 200);
    // The fenced attempts were not stored on A (nothing to lose): their
    // keys publish anew on B.
    let (status, _, body) = publish(&http, &server.url, "fenced-0").await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"idempotent_replay\":false"), "{body}");
}

#[test]
fn a_server_started_on_a_read_only_node_says_so() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (_primary, standby) = rt.block_on(async {
        let primary = TestCluster::start().await;
        primary.create_named_database("ro_start").await;
        let standby = TestCluster::start_standby(&primary, "s", ClusterOptions::default()).await;
        (primary, standby)
    });
    let dir = tempfile::tempdir().unwrap();
    let out = onceq()
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path())
        .arg("--database-url")
        .arg(standby.url_of("ro_start"))
        .env("ONCEQ_API_KEY", "ro-key")
        .env_remove("DATABASE_URL")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "serve on a standby must not start");
    assert!(
        said.contains("read-only"),
        "the error must say the database is read-only: {said}"
    );
    assert!(
        said.contains("target_session_attrs=read-write"),
        "the hint must say how to reach the primary: {said}"
    );
    assert!(!said.contains("error asserting migrations table"), "{said}");
}
