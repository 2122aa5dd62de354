//! A database outage answers 503 UNAVAILABLE with Retry-After, stores
//! nothing, and the server recovers by itself when the database returns.

use onceq_testdb::{StopMode, TestCluster};
use serde_json::json;

use crate::harness::TestServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_outage_is_503_then_recovers() {
    let cluster = TestCluster::start().await;
    let db = cluster.create_database().await;
    let store = onceq_store::open(Some(&db.url), std::path::Path::new("unused"))
        .await
        .unwrap();
    let s = TestServer::on_store(store, onceq_server::ServerConfig::default()).await;
    s.publish("q", json!("before")).await;

    cluster.stop(StopMode::Immediate).await;
    let r = s
        .post(
            "/v1/queue/publish",
            json!({"queue": "q", "payload": "during"}),
        )
        .await;
    r.err(503, "UNAVAILABLE");
    assert_eq!(r.body["error"]["retryable"], true);
    assert_eq!(r.headers["retry-after"], "1");
    let r = s.http.get(s.url("/readyz")).send().await.unwrap();
    assert_eq!(r.status(), 503);
    assert_eq!(r.headers()["retry-after"], "1");
    // /metrics still answers, with the counters; the outage shows in them
    let m = s.scrape().await;
    assert_eq!(m.value("onceq_queue_depth_ok", &[]), 0.0);
    assert!(
        m.get(
            "onceq_queue_messages",
            &[("project", "alpha"), ("queue", "q"), ("state", "available")]
        )
        .is_none()
    );
    let errors = |source| {
        m.value(
            "onceq_db_errors_total",
            &[("source", source), ("kind", "unavailable")],
        )
    };
    assert!(errors("request") >= 1.0, "{}", m.text);
    assert_eq!(errors("scrape"), 1.0);
    assert_eq!(
        m.value(
            "onceq_messages_published_total",
            &[("project", "alpha"), ("queue", "q")]
        ),
        1.0
    );

    cluster.restart_server().await;
    let mut recovered = false;
    for _ in 0..50 {
        let r = s
            .post(
                "/v1/queue/publish",
                json!({"queue": "q", "payload": "after"}),
            )
            .await;
        if r.status == 200 {
            recovered = true;
            break;
        }
        r.err(503, "UNAVAILABLE");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert!(
        recovered,
        "the server did not recover after the database came back"
    );
    let st = s.stats("q").await;
    assert_eq!(
        st["message_count"], 2,
        "before + after, nothing from the outage"
    );
}
