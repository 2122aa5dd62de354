//! `POST /v1/queue/pause/{queue}` and `/resume/{queue}` (queue-api-2.md §6):
//! the answers, the record and stats, publishes accepted and nothing handed
//! out while paused, leases already out running on, a long poll woken by
//! the resume (on this server at once, on another sharing the database at
//! its re-check), push delivery held, `/metrics`, and the refusals.

use std::time::Duration;

use serde_json::{Value, json};

use crate::{
    both,
    harness::{Backend, TestServer},
    push,
};

async fn consume(s: &TestServer, queue: &str) -> Vec<Value> {
    let r = s
        .post(
            "/v1/queue/consume",
            json!({"queue": queue, "max_messages": 10}),
        )
        .await;
    r.ok();
    r.data()["items"].as_array().unwrap().clone()
}

async fn pause_and_resume_hold_and_release_hand_outs(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.post("/v1/queue/create", json!({"name": "jobs"}))
        .await
        .ok();
    s.publish("jobs", json!(1)).await;
    let held = consume(&s, "jobs").await.remove(0);
    s.publish("jobs", json!(2)).await;

    for _ in 0..2 {
        let r = s.post("/v1/queue/pause/jobs", json!({})).await;
        assert_eq!(r.ok().data(), &json!({"queue": "jobs", "paused": true}));
    }
    assert_eq!(s.get("/v1/queue/get/jobs").await.data()["paused"], true);
    let list = s.get("/v1/queue/list").await;
    let flags: Vec<_> = list.data()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| (q["name"].clone(), q["paused"].clone()))
        .collect();
    assert_eq!(
        flags,
        [
            (json!("jobs"), json!(true)),
            (json!("jobs-dlq"), json!(false))
        ]
    );
    assert_eq!(s.stats("jobs").await["paused"], true);

    // Publishes are accepted; nothing goes out; the lease out runs on.
    s.publish("jobs", json!(3)).await;
    assert!(consume(&s, "jobs").await.is_empty());
    let r = s
        .post(
            "/v1/queue/extend",
            json!({"queue": "jobs", "message_id": held["message_id"],
                   "receipt": held["receipt"], "visibility_timeout": 60}),
        )
        .await;
    assert_eq!(r.data()["extended"], true);
    let r = s
        .post(
            "/v1/queue/ack",
            json!({"queue": "jobs", "message_id": held["message_id"], "receipt": held["receipt"]}),
        )
        .await;
    assert_eq!(r.data()["acked"], true);
    let stats = s.stats("jobs").await;
    assert_eq!(
        (stats["available"].clone(), stats["in_flight"].clone()),
        (json!(2), json!(0))
    );

    for _ in 0..2 {
        let r = s.post("/v1/queue/resume/jobs", json!({})).await;
        assert_eq!(r.ok().data(), &json!({"queue": "jobs", "paused": false}));
    }
    let got: Vec<_> = consume(&s, "jobs")
        .await
        .into_iter()
        .map(|m| m["payload"].clone())
        .collect();
    assert_eq!(got, [json!(2), json!(3)]);
    assert_eq!(s.stats("jobs").await["paused"], false);
}
both!(pause_and_resume_hold_and_release_hand_outs);

/// Each refusal is an error with its code, a message naming what is wrong
/// and a hint; none pauses anything.
async fn pause_refusals(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.post("/v1/queue/create", json!({"name": "jobs"}))
        .await
        .ok();
    for path in ["/v1/queue/pause/nope", "/v1/queue/resume/nope"] {
        let r = s.post(path, json!({})).await;
        assert!(r.err(404, "QUEUE_NOT_FOUND").contains("nope"));
        assert!(r.body["error"]["hint"].is_string(), "{}", r.body);
    }
    assert_eq!(s.get("/v1/queue/get/nope").await.status, 404, "not created");
    let r = s.post("/v1/queue/pause/a%20b", json!({})).await;
    assert!(r.err(400, "INVALID_PARAMS").contains("queue"));
    assert!(r.body["error"]["hint"].is_string(), "{}", r.body);
    // A key that may only consume may not pause; one of another project
    // does not see the queue.
    let consumer = s.scoped_key("alpha", "publish,consume", "*").await;
    s.post_as(&consumer, "/v1/queue/pause/jobs", json!({}))
        .await
        .err(403, "FORBIDDEN");
    s.post_as(&s.other_key, "/v1/queue/pause/jobs", json!({}))
        .await
        .err(404, "QUEUE_NOT_FOUND");
    let r = s
        .http
        .post(s.url("/v1/queue/pause/jobs"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(s.get("/v1/queue/get/jobs").await.data()["paused"], false);
}
both!(pause_refusals);

/// A consume of `queue` on `s` waiting up to 20 s, over its own request.
fn long_poll(s: &TestServer, queue: &str) -> tokio::task::JoinHandle<Value> {
    let (http, url, key) = (s.http.clone(), s.url("/v1/queue/consume"), s.key.clone());
    let body = json!({"queue": queue, "wait_seconds": 20});
    tokio::spawn(async move {
        let r = http
            .post(url)
            .bearer_auth(key)
            .json(&body)
            .send()
            .await
            .unwrap();
        r.json::<Value>().await.unwrap()
    })
}

/// A long poll on a paused queue waits, and the resume wakes it at once:
/// its re-check of the store is further off than its whole wait.
async fn a_resume_wakes_a_long_poll(b: Backend) {
    let config = onceq_server::ServerConfig {
        long_poll_recheck: Duration::from_secs(60),
        ..Default::default()
    };
    let s = TestServer::in_process_with(b, config).await;
    s.publish("jobs", json!("held")).await;
    s.post("/v1/queue/pause/jobs", json!({})).await.ok();
    let waiter = long_poll(&s, "jobs");
    // Real time only to see the poll still waiting, as consume.rs does.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiter.is_finished(), "a paused queue hands nothing out");
    s.post("/v1/queue/resume/jobs", json!({})).await.ok();
    let got = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .expect("the resume did not wake the long poll")
        .unwrap();
    assert_eq!(got["data"]["items"][0]["payload"], "held");
}
both!(a_resume_wakes_a_long_poll);

/// Two servers on one PostgreSQL database: a pause on one holds the
/// other's consumers at once (the flag is in the shared queue row), and a
/// resume on one reaches a long poll on the other at its next re-check.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_pause_holds_and_a_resume_reaches_another_server() {
    let config = || onceq_server::ServerConfig {
        long_poll_recheck: Duration::from_millis(100),
        ..Default::default()
    };
    let (_db, a, b) = TestServer::two_on_one_database(config).await;
    a.publish("jobs", json!("held")).await;
    a.post("/v1/queue/pause/jobs", json!({})).await.ok();
    assert!(consume(&b, "jobs").await.is_empty());
    assert_eq!(b.stats("jobs").await["paused"], true);
    let waiter = long_poll(&b, "jobs");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiter.is_finished(), "paused on every server");
    a.post("/v1/queue/resume/jobs", json!({})).await.ok();
    let got = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .expect("the other server's long poll never saw the resume")
        .unwrap();
    assert_eq!(got["data"]["items"][0]["payload"], "held");
}

/// Push delivery stops while paused and resumes with the queue.
async fn pause_holds_push_delivery(b: Backend) {
    let s = TestServer::start_with(b, push::config()).await;
    let hook = push::receiver::Receiver::answering(204).await;
    push::jobs_subscribed(&s, &hook.url("/hook"), json!({})).await;
    s.post("/v1/queue/pause/jobs", json!({})).await.ok();
    s.publish("jobs", json!({"n": 1})).await;
    // Fifteen of the dispatcher's 20 ms scans.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(hook.seen().is_empty(), "delivered while paused");
    assert_eq!(s.stats("jobs").await["available"], 1);
    s.post("/v1/queue/resume/jobs", json!({})).await.ok();
    assert_eq!(hook.wait_for(1).await.len(), 1);
    push::stats_until(&s, "jobs", |st| st["message_count"] == 0).await;
}
both!(pause_holds_push_delivery);

/// `/metrics`: onceq_queue_paused per queue, and the process metrics.
async fn metrics_show_paused_queues_and_the_process(b: Backend) {
    let s = TestServer::start(b).await;
    s.publish("jobs", json!(1)).await;
    s.publish("other", json!(1)).await;
    s.post("/v1/queue/pause/jobs", json!({})).await.ok();
    let m = s.scrape().await;
    let q = |queue: &'static str| [("project", "alpha"), ("queue", queue)];
    assert_eq!(m.value("onceq_queue_paused", &q("jobs")), 1.0);
    assert_eq!(m.value("onceq_queue_paused", &q("other")), 0.0);
    assert!(m.value("process_resident_memory_bytes", &[]) > 1_000_000.0);
    assert!(m.value("process_cpu_seconds_total", &[]) > 0.0);
    let fds = m.value("process_open_fds", &[]);
    assert!(fds >= 3.0, "stdin, stdout, stderr at least: {fds}");
    let max = m.value("process_max_fds", &[]);
    assert!(max == 0.0 || max >= fds, "0 means unlimited: {max}");
    let start = m.value("process_start_time_seconds", &[]);
    let now = jiff::Timestamp::now().as_second() as f64;
    assert!(start > now - 86_400.0 && start <= now + 1.0, "{start}");
}
both!(metrics_show_paused_queues_and_the_process);

/// pause and resume are in discovery and in the OpenAPI document, with the
/// new record fields and settings.
#[tokio::test]
async fn pause_resume_and_settings_are_discovered_and_documented() {
    let s = TestServer::in_process(Backend::Sqlite).await;
    let d = s.get("/v1/discovery").await;
    let caps = d.ok().data()["capabilities"].as_array().unwrap().clone();
    for (id, path) in [
        ("queue.pause", "/v1/queue/pause/{queue}"),
        ("queue.resume", "/v1/queue/resume/{queue}"),
    ] {
        assert!(
            caps.iter()
                .any(|c| c["id"] == id && c["method"] == "POST" && c["path"] == path),
            "{id} not in discovery"
        );
    }
    let doc = serde_json::to_value(onceq_server::openapi::document()).unwrap();
    for (path, op) in [
        ("/v1/queue/pause/{queue}", "queue_pause"),
        ("/v1/queue/resume/{queue}", "queue_resume"),
    ] {
        assert_eq!(doc["paths"][path]["post"]["operationId"], op);
    }
    let schemas = &doc["components"]["schemas"];
    for field in ["paused", "retry_backoff", "max_in_flight", "rate_per_sec"] {
        assert!(
            schemas["QueueRecord"]["properties"].get(field).is_some(),
            "{field}"
        );
    }
    assert!(schemas["QueueStats"]["properties"].get("paused").is_some());
    for field in ["retry_backoff", "max_in_flight", "rate_per_sec"] {
        assert!(
            schemas["CreateQueue"]["properties"].get(field).is_some(),
            "{field}"
        );
    }
    assert_eq!(
        schemas["RetryBackoffBody"]["required"],
        json!(["initial_seconds", "max_seconds"])
    );
}
