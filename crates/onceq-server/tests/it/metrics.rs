//! `/metrics` over HTTP: after publishing, consuming, acking, nacking,
//! dead-lettering and lease expiry, the scraped counters and gauges match
//! what happened (and `/v1/queue/stats`); the label cap, the depth cache,
//! the token and the switch; push deliveries counted like the API's calls.

use std::time::Duration;

use onceq_server::{ServerConfig, config::MetricsConfig};
use serde_json::{Value, json};

use crate::{
    both,
    harness::{Backend, TestServer},
};

/// Gauges read on every scrape (no depth cache).
fn fresh() -> ServerConfig {
    ServerConfig {
        metrics: MetricsConfig {
            depth_max_age: Duration::ZERO,
            ..MetricsConfig::default()
        },
        ..ServerConfig::default()
    }
}

async fn consume(s: &TestServer, queue: &str, max: u32, vt: u32) -> Vec<Value> {
    let r = s
        .post(
            "/v1/queue/consume",
            json!({"queue": queue, "max_messages": max, "visibility_timeout": vt}),
        )
        .await;
    r.ok();
    r.data()["items"].as_array().unwrap().clone()
}

async fn lease_call(s: &TestServer, path: &str, queue: &str, m: &Value, extra: Value) -> Value {
    let mut body = json!({"queue": queue, "message_id": m["message_id"], "receipt": m["receipt"]});
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let r = s.post(path, body).await;
    r.ok();
    r.data().clone()
}

async fn scraped_numbers_match_what_happened(b: Backend) {
    let s = TestServer::in_process_with(b, fresh()).await;
    s.post(
        "/v1/queue/create",
        json!({"name": "once", "max_retries": 0}),
    )
    .await
    .ok();
    let keyed = json!({"queue": "jobs", "payload": 1, "idempotency_key": "k"});
    s.post("/v1/queue/publish", keyed.clone()).await.ok();
    s.publish("jobs", json!(2)).await;
    let replay = s.post("/v1/queue/publish", keyed).await;
    assert_eq!(replay.body["metadata"]["idempotent_replay"], true);
    s.post(
        "/v1/queue/publish_batch",
        json!({"queue": "jobs", "messages": [
            {"payload": 3}, {"payload": 4}, {"payload": 1, "idempotency_key": "k"}
        ]}),
    )
    .await
    .ok();
    // jobs holds 1 2 3 4; 4 stored, 2 replays

    let got = consume(&s, "jobs", 3, 60).await;
    assert_eq!(got.len(), 3);
    assert_eq!(
        lease_call(&s, "/v1/queue/ack", "jobs", &got[0], json!({})).await["acked"],
        true
    );
    // a second ack of the same lease is not held any more: not counted
    assert_eq!(
        lease_call(&s, "/v1/queue/ack", "jobs", &got[0], json!({})).await["acked"],
        false
    );
    let back = lease_call(&s, "/v1/queue/nack", "jobs", &got[1], json!({})).await;
    assert_eq!(back["requeued"], true);
    let dead = lease_call(
        &s,
        "/v1/queue/nack",
        "jobs",
        &got[2],
        json!({"requeue": false}),
    )
    .await;
    assert_eq!(dead["dead_lettered"], true);

    // one lease expires on each queue; on "once" it was the last delivery
    s.publish("once", json!("o")).await;
    assert_eq!(consume(&s, "jobs", 1, 10).await.len(), 1);
    assert_eq!(consume(&s, "once", 1, 10).await.len(), 1);
    s.expire_leases_after(11).await;

    s.post(
        "/v1/queue/publish",
        json!({"queue": "jobs", "payload": 5, "delay_seconds": 3600}),
    )
    .await
    .ok();
    assert_eq!(consume(&s, "jobs", 1, 600).await.len(), 1);
    s.post("/v1/queue/publish", json!({}))
        .await
        .err(400, "INVALID_PARAMS");
    s.get("/nope").await.err(404, "NOT_FOUND");

    let m = s.scrape().await;
    fn q(queue: &str) -> [(&str, &str); 2] {
        [("project", "alpha"), ("queue", queue)]
    }
    let counter = |name: &str, queue: &str| m.value(name, &q(queue));
    assert_eq!(counter("onceq_messages_published_total", "jobs"), 5.0);
    assert_eq!(counter("onceq_messages_replayed_total", "jobs"), 2.0);
    assert_eq!(counter("onceq_messages_consumed_total", "jobs"), 5.0);
    assert_eq!(counter("onceq_messages_acked_total", "jobs"), 1.0);
    assert_eq!(counter("onceq_messages_nacked_total", "jobs"), 2.0);
    assert_eq!(counter("onceq_lease_expiries_total", "jobs"), 1.0);
    assert_eq!(counter("onceq_messages_published_total", "once"), 1.0);
    assert_eq!(counter("onceq_messages_consumed_total", "once"), 1.0);
    assert_eq!(counter("onceq_lease_expiries_total", "once"), 1.0);
    let dead = |queue, reason| {
        m.value(
            "onceq_messages_dead_lettered_total",
            &[("project", "alpha"), ("queue", queue), ("reason", reason)],
        )
    };
    assert_eq!(dead("jobs", "nack"), 1.0);
    assert_eq!(dead("jobs", "lease_expired"), 0.0);
    assert_eq!(dead("once", "nack"), 0.0);
    assert_eq!(dead("once", "lease_expired"), 1.0);

    // gauges: what the stats endpoint says, queue by queue
    assert_eq!(m.value("onceq_queue_depth_ok", &[]), 1.0);
    let depth = |queue, state| {
        m.value(
            "onceq_queue_messages",
            &[("project", "alpha"), ("queue", queue), ("state", state)],
        )
    };
    assert_eq!(
        [
            depth("jobs", "available"),
            depth("jobs", "delayed"),
            depth("jobs", "in_flight"),
            depth("jobs", "dead_lettered"),
        ],
        [1.0, 1.0, 1.0, 1.0]
    );
    for queue in ["jobs", "jobs-dlq", "once", "once-dlq"] {
        let st = s.stats(queue).await;
        for state in ["available", "delayed", "in_flight", "dead_lettered"] {
            assert_eq!(
                depth(queue, state),
                st[state].as_f64().unwrap(),
                "{queue} {state}"
            );
        }
        assert_eq!(
            m.value("onceq_queue_oldest_message_age_seconds", &q(queue)),
            st["oldest_message_age_seconds"].as_f64().unwrap(),
            "{queue}"
        );
    }
    assert_eq!(
        m.value("onceq_queue_oldest_message_age_seconds", &q("jobs")),
        11.0
    );

    // requests by route template, method and status class
    let http = |route, method, status| {
        m.get(
            "onceq_http_requests_total",
            &[("route", route), ("method", method), ("status", status)],
        )
    };
    assert_eq!(http("/v1/queue/publish", "POST", "2xx"), Some(5.0));
    assert_eq!(http("/v1/queue/publish", "POST", "4xx"), Some(1.0));
    assert_eq!(http("/v1/queue/publish_batch", "POST", "2xx"), Some(1.0));
    assert_eq!(http("/v1/queue/ack", "POST", "2xx"), Some(2.0));
    assert_eq!(http("unmatched", "GET", "4xx"), Some(1.0));
    assert_eq!(
        m.value(
            "onceq_http_request_duration_seconds_count",
            &[("route", "/v1/queue/publish"), ("method", "POST")]
        ),
        6.0
    );
    assert!(
        m.series("onceq_http_requests_total")
            .iter()
            .all(|l| !l["route"].contains("jobs")),
        "routes are templates, never queue names"
    );

    // the pools and the store's errors
    for kind in ["unavailable", "internal"] {
        let labels = [("source", "request"), ("kind", kind)];
        assert_eq!(m.value("onceq_db_errors_total", &labels), 0.0);
    }
    match b {
        Backend::Postgres => {
            let pool = [("pool", "postgres")];
            // the default pool_size, plus the committers' five
            assert_eq!(m.value("onceq_db_pool_max_size", &pool), 21.0);
            assert!(m.value("onceq_db_pool_size", &pool) >= 1.0);
            assert_eq!(m.value("onceq_db_pool_waiting", &pool), 0.0);
        }
        Backend::Sqlite => {
            assert!(m.value("onceq_db_pool_size", &[("pool", "sqlite_readers")]) >= 1.0);
            assert_eq!(
                m.value("onceq_db_pool_max_size", &[("pool", "sqlite_writer")]),
                1.0
            );
        }
    }
    assert_eq!(
        m.value(
            "onceq_build_info",
            &[("version", env!("CARGO_PKG_VERSION"))]
        ),
        1.0
    );
}
both!(scraped_numbers_match_what_happened);

async fn queues_beyond_the_cap_share_one_label_set(b: Backend) {
    let config = ServerConfig {
        metrics: MetricsConfig {
            max_queue_series: 2,
            // one depth query for the whole test: gauges stay as first read
            depth_max_age: Duration::from_secs(3600),
            ..MetricsConfig::default()
        },
        ..ServerConfig::default()
    };
    let s = TestServer::in_process_with(b, config).await;
    for queue in ["a", "b", "c"] {
        s.publish(queue, json!(1)).await;
    }
    let m = s.scrape().await;
    let other = [("project", "_other"), ("queue", "_other")];
    assert_eq!(m.value("onceq_messages_published_total", &other), 1.0, "c");
    assert_eq!(
        m.value(
            "onceq_messages_published_total",
            &[("project", "alpha"), ("queue", "a")]
        ),
        1.0
    );
    // gauges use the same sets: a and b their own, every other queue
    // (the DLQs and c) summed under _other
    let depth = |m: &crate::prom::Scrape, project, queue| {
        m.value(
            "onceq_queue_messages",
            &[
                ("project", project),
                ("queue", queue),
                ("state", "available"),
            ],
        )
    };
    assert_eq!(depth(&m, "alpha", "a"), 1.0);
    assert_eq!(depth(&m, "_other", "_other"), 1.0);
    assert!(!m.text.contains("queue=\"c\""), "{}", m.text);
    assert!(!m.text.contains("queue=\"a-dlq\""), "{}", m.text);
    assert_eq!(m.value("onceq_metrics_queue_label_sets", &[]), 2.0);
    assert_eq!(m.value("onceq_metrics_queue_label_sets_max", &[]), 2.0);

    s.publish("a", json!(2)).await;
    s.publish("d", json!(2)).await;
    let m = s.scrape().await;
    assert_eq!(
        m.value("onceq_messages_published_total", &other),
        2.0,
        "c, d"
    );
    assert_eq!(
        m.value(
            "onceq_messages_published_total",
            &[("project", "alpha"), ("queue", "a")]
        ),
        2.0,
        "counters are live"
    );
    assert_eq!(
        depth(&m, "alpha", "a"),
        1.0,
        "depths come from the cached query"
    );
}
both!(queues_beyond_the_cap_share_one_label_set);

async fn metrics_can_require_a_token_or_be_off(b: Backend) {
    let with_token = ServerConfig {
        metrics: MetricsConfig {
            token: Some("scrape-me".into()),
            ..MetricsConfig::default()
        },
        ..ServerConfig::default()
    };
    let s = TestServer::in_process_with(b, with_token).await;
    s.send(reqwest::Method::GET, "/metrics", None, None)
        .await
        .err(401, "UNAUTHORIZED");
    let key = s.key.clone();
    s.send(reqwest::Method::GET, "/metrics", None, Some(&key))
        .await
        .err(401, "UNAUTHORIZED");
    let r = s
        .http
        .get(s.url("/metrics"))
        .bearer_auth("scrape-me")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.text().await.unwrap().contains("onceq_build_info"));

    let off = ServerConfig {
        metrics: MetricsConfig {
            enabled: false,
            ..MetricsConfig::default()
        },
        ..ServerConfig::default()
    };
    let s = TestServer::in_process_with(b, off).await;
    let msg = s
        .send(reqwest::Method::GET, "/metrics", None, None)
        .await
        .err(404, "NOT_FOUND");
    assert!(msg.contains("--metrics-disable"), "{msg}");
}
both!(metrics_can_require_a_token_or_be_off);

/// Push deliveries are hand-outs, acks and nacks like the API's: a delivery
/// answered 500 counts as consumed and nacked, the next one answered 204 as
/// consumed and acked.
async fn push_deliveries_are_counted(b: Backend) {
    use crate::push::receiver::{Answer, Receiver};

    let s = TestServer::in_process_with(
        b,
        ServerConfig {
            metrics: fresh().metrics,
            ..crate::push::config()
        },
    )
    .await;
    let hook = Receiver::start([Answer::Status(500)], Answer::Status(204)).await;
    s.post("/v1/queue/create", json!({"name": "hooked"}))
        .await
        .ok();
    crate::push::subscribe(&s, "hooked", &hook.url("/h"), json!({})).await;
    s.publish("hooked", json!(1)).await;

    let q = [("project", "alpha"), ("queue", "hooked")];
    // Settled after the endpoint answered: poll until the count shows.
    let scrape_until = |name: &'static str, want: f64| {
        let s = &s;
        async move {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
            loop {
                let m = s.scrape().await;
                if m.get(name, &q) == Some(want) {
                    return m;
                }
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "{name} never reached {want}:\n{}",
                    m.text
                );
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    };
    hook.wait_for(1).await;
    let m = scrape_until("onceq_messages_nacked_total", 1.0).await;
    assert_eq!(m.value("onceq_messages_consumed_total", &q), 1.0);
    assert_eq!(m.value("onceq_messages_acked_total", &q), 0.0);

    // Past the retry's backoff (at most an hour).
    s.clock.advance(jiff::SignedDuration::from_hours(2));
    hook.wait_for(2).await;
    let m = scrape_until("onceq_messages_acked_total", 1.0).await;
    assert_eq!(m.value("onceq_messages_consumed_total", &q), 2.0);
    assert_eq!(m.value("onceq_messages_nacked_total", &q), 1.0);
    let db_errors = |source| {
        m.value(
            "onceq_db_errors_total",
            &[("source", source), ("kind", "internal")],
        )
    };
    assert_eq!(db_errors("push"), 0.0);
}
both!(push_deliveries_are_counted);
