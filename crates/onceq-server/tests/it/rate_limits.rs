//! Rate limits per key and per project, on one server and on two sharing
//! a PostgreSQL database. Time is the manual clock: tokens come back only
//! when the test moves it.

use jiff::SignedDuration;
use onceq_server::ServerConfig;
use onceq_store::RateLimit;

use crate::{
    both,
    harness::{Backend, TestServer},
};

fn limited(key: Option<(f64, u32)>, project: Option<(f64, u32)>) -> ServerConfig {
    let rl = |(per_sec, burst)| RateLimit { per_sec, burst };
    TestServer::manual_sync(ServerConfig {
        key_rate: key.map(rl),
        project_rate: project.map(rl),
        ..ServerConfig::default()
    })
}

async fn per_key_limit_answers_429_with_retry_after(b: Backend) {
    let s = TestServer::in_process_with(b, limited(Some((1.0, 3)), None)).await;
    for _ in 0..3 {
        s.get("/v1/queue/list").await.ok();
    }
    let r = s.get("/v1/queue/list").await;
    let m = r.err(429, "RATE_LIMITED");
    assert!(m.contains("API key"), "{m}");
    assert_eq!(r.headers["retry-after"], "1");
    assert_eq!(r.body["error"]["retryable"], true);
    // a refused publish stores nothing
    s.post(
        "/v1/queue/publish",
        serde_json::json!({"queue": "jobs", "payload": 1}),
    )
    .await
    .err(429, "RATE_LIMITED");
    // another key of the same project has its own bucket
    let other = s.scoped_key("alpha", "full", "*").await;
    s.get_as(&other, "/v1/queue/list").await.ok();
    assert_eq!(
        s.get_as(&other, "/v1/queue/list").await.data()["items"],
        serde_json::json!([])
    );
    // one second later, one more
    s.clock.advance(SignedDuration::from_secs(1));
    s.get("/v1/queue/list").await.ok();
    s.get("/v1/queue/list").await.err(429, "RATE_LIMITED");

    // a key's own limit applies at once (keys are read per request): 0 lifts it
    let id = s.key_id(&s.key).await;
    s.state
        .store()
        .key_set_rate(
            &id,
            Some(RateLimit {
                per_sec: 0.0,
                burst: 1,
            }),
        )
        .await
        .unwrap();
    for _ in 0..10 {
        s.get("/v1/queue/list").await.ok();
    }
}
both!(per_key_limit_answers_429_with_retry_after);

async fn per_project_limit_spans_its_keys(b: Backend) {
    let s = TestServer::in_process_with(b, limited(None, Some((2.0, 2)))).await;
    let second = s.scoped_key("alpha", "full", "*").await;
    s.get("/v1/queue/list").await.ok();
    s.get_as(&second, "/v1/queue/list").await.ok();
    let m = s
        .get_as(&second, "/v1/queue/list")
        .await
        .err(429, "RATE_LIMITED");
    assert!(m.contains("project"), "{m}");
    // beta has its own bucket
    s.get_as(&s.other_key, "/v1/queue/list").await.ok();

    // a project's own limit, read by the next sync: 0.5/s, burst 1
    s.state
        .store()
        .project_set_rate(
            "beta",
            Some(RateLimit {
                per_sec: 0.5,
                burst: 1,
            }),
        )
        .await
        .unwrap();
    s.clock.advance(SignedDuration::from_secs(10));
    s.sync().await;
    s.get_as(&s.other_key, "/v1/queue/list").await.ok();
    let r = s.get_as(&s.other_key, "/v1/queue/list").await;
    r.err(429, "RATE_LIMITED");
    assert_eq!(r.headers["retry-after"], "2");
}
both!(per_project_limit_spans_its_keys);

/// Two servers on one database split every limit in two: together they
/// admit what one would.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_servers_share_a_key_limit() {
    let (_handle, a, b) = TestServer::two_on_one_database(|| limited(Some((10.0, 10)), None)).await;
    // both heartbeats seen by both
    a.sync().await;
    b.sync().await;
    a.sync().await;
    assert_eq!(a.state.accounts.limiter.servers(), 2);
    assert_eq!(b.state.accounts.limiter.servers(), 2);

    let mut admitted = 0;
    for s in [&a, &b] {
        for _ in 0..8 {
            let r = s.get_as(&a.key, "/v1/queue/list").await;
            match r.status {
                200 => admitted += 1,
                429 => assert_eq!(r.headers["retry-after"], "1"),
                other => panic!("unexpected {other}"),
            }
        }
    }
    assert_eq!(admitted, 10, "the two servers together admit the burst");
    for s in [&a, &b] {
        s.clock.advance(SignedDuration::from_secs(1));
    }
    let mut admitted = 0;
    for s in [&a, &b] {
        for _ in 0..8 {
            admitted += usize::from(s.get_as(&a.key, "/v1/queue/list").await.status == 200);
        }
    }
    assert_eq!(admitted, 10, "and 10/s after that");

    // a server that stops leaves the table: the other takes the whole limit
    onceq_server::maintenance::account_sync::shutdown(&b.state).await;
    a.sync().await;
    assert_eq!(a.state.accounts.limiter.servers(), 1);
}
