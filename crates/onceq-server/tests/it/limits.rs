//! `max_in_flight` and `rate_per_sec` per queue (queue-api-2.md §6): set on
//! create and update (each bad value a 400 naming it, `null` clears), a
//! consume simply gets fewer (never an error), and with two servers on one
//! PostgreSQL database many concurrent consumers never have more than
//! `max_in_flight` out at once, and hand-outs over a window driven by the
//! servers' clocks stay within the token bucket.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};

use jiff::SignedDuration;
use serde_json::{Value, json};

use crate::{
    both,
    harness::{Backend, TestServer},
};

async fn take(s: &TestServer, queue: &str, max: u32) -> Vec<Value> {
    let r = s
        .post(
            "/v1/queue/consume",
            json!({"queue": queue, "max_messages": max}),
        )
        .await;
    r.ok();
    r.data()["items"].as_array().unwrap().clone()
}

async fn limits_are_set_and_cleared(b: Backend) {
    let s = TestServer::in_process(b).await;
    let r = s
        .post(
            "/v1/queue/create",
            json!({"name": "jobs", "max_in_flight": 4, "rate_per_sec": 2.5}),
        )
        .await;
    let d = r.ok().data().clone();
    assert_eq!(
        (d["max_in_flight"].clone(), d["rate_per_sec"].clone()),
        (json!(4), json!(2.5))
    );
    let d = s
        .post(
            "/v1/queue/update",
            json!({"name": "jobs", "max_in_flight": 8.0}),
        )
        .await;
    assert_eq!(d.ok().data()["max_in_flight"], 8);
    assert_eq!(d.data()["rate_per_sec"], 2.5, "kept");
    let d = s
        .post(
            "/v1/queue/update",
            json!({"name": "jobs", "max_in_flight": null, "rate_per_sec": null}),
        )
        .await;
    assert_eq!(
        (
            d.ok().data()["max_in_flight"].clone(),
            d.data()["rate_per_sec"].clone()
        ),
        (Value::Null, Value::Null)
    );

    let bad: [(Value, &str); 7] = [
        (json!({"max_in_flight": 0}), "max_in_flight"),
        (json!({"max_in_flight": 100_001}), "max_in_flight"),
        (json!({"max_in_flight": 2.5}), "max_in_flight"),
        (json!({"max_in_flight": "2"}), "max_in_flight"),
        (json!({"rate_per_sec": 0}), "rate_per_sec"),
        (json!({"rate_per_sec": 100_000.5}), "rate_per_sec"),
        (json!({"rate_per_sec": true}), "rate_per_sec"),
    ];
    for (extra, field) in bad {
        let mut body = json!({"name": "fresh"});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let r = s.post("/v1/queue/create", body.clone()).await;
        assert!(r.err(400, "INVALID_PARAMS").contains(field), "{body}");
        assert!(r.body["error"]["hint"].is_string());
        body["name"] = json!("jobs");
        let r = s.post("/v1/queue/update", body.clone()).await;
        assert!(r.err(400, "INVALID_PARAMS").contains(field), "{body}");
    }
    s.get("/v1/queue/get/fresh")
        .await
        .err(404, "QUEUE_NOT_FOUND");
    assert_eq!(
        s.get("/v1/queue/get/jobs").await.data()["max_in_flight"],
        Value::Null
    );
}
both!(limits_are_set_and_cleared);

async fn a_limited_consume_gets_fewer_never_an_error(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.post(
        "/v1/queue/create",
        json!({"name": "jobs", "max_in_flight": 2}),
    )
    .await
    .ok();
    s.post(
        "/v1/queue/create",
        json!({"name": "paced", "rate_per_sec": 3}),
    )
    .await
    .ok();
    for n in 0..10 {
        s.publish("jobs", json!(n)).await;
        s.publish("paced", json!(n)).await;
    }
    let out = take(&s, "jobs", 10).await;
    assert_eq!(out.len(), 2);
    assert!(take(&s, "jobs", 10).await.is_empty());
    s.post(
        "/v1/queue/ack",
        json!({"queue": "jobs", "message_id": out[0]["message_id"], "receipt": out[0]["receipt"]}),
    )
    .await
    .ok();
    assert_eq!(take(&s, "jobs", 10).await.len(), 1);

    assert_eq!(take(&s, "paced", 10).await.len(), 3);
    assert!(take(&s, "paced", 10).await.is_empty());
    s.clock.advance(SignedDuration::from_secs(1));
    assert_eq!(take(&s, "paced", 10).await.len(), 3);
}
both!(a_limited_consume_gets_fewer_never_an_error);

/// One call over a server's own HTTP, for tasks off the harness.
async fn post(s: &(reqwest::Client, String, String), path: &str, body: Value) -> Value {
    let (http, base, key) = s;
    http.post(format!("{base}{path}"))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// 8 consumers, half on each of two servers, take 200 messages of a queue
/// with max_in_flight 5 as fast as they can; the messages they hold at once
/// (counted up when a consume answers, down before the ack is sent, so
/// never more than the servers count) never pass 5.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_servers_never_exceed_max_in_flight() {
    let (_db, a, b) = TestServer::two_on_one_database(Default::default).await;
    a.post(
        "/v1/queue/create",
        json!({"name": "jobs", "max_in_flight": 5}),
    )
    .await
    .ok();
    const N: usize = 200;
    for i in 0..N / 10 {
        let msgs: Vec<Value> = (0..10).map(|j| json!({"payload": i * 10 + j})).collect();
        a.publish_batch("jobs", &msgs).await;
    }
    let held = Arc::new(AtomicI64::new(0));
    let peak = Arc::new(AtomicI64::new(0));
    let acked = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for c in 0..8 {
        let s = if c % 2 == 0 { &a } else { &b };
        let conn = (s.http.clone(), s.url(""), a.key.clone());
        let (held, peak, acked) = (held.clone(), peak.clone(), acked.clone());
        tasks.push(tokio::spawn(async move {
            while acked.load(Ordering::SeqCst) < N {
                let r = post(
                    &conn,
                    "/v1/queue/consume",
                    json!({"queue": "jobs", "max_messages": 10, "visibility_timeout": 300}),
                )
                .await;
                let items = r["data"]["items"].as_array().unwrap().clone();
                let now = held.fetch_add(items.len() as i64, Ordering::SeqCst) + items.len() as i64;
                peak.fetch_max(now, Ordering::SeqCst);
                for m in items {
                    held.fetch_sub(1, Ordering::SeqCst);
                    let r = post(
                        &conn,
                        "/v1/queue/ack",
                        json!({"queue": "jobs", "message_id": m["message_id"], "receipt": m["receipt"]}),
                    )
                    .await;
                    assert_eq!(r["data"]["acked"], true);
                    acked.fetch_add(1, Ordering::SeqCst);
                }
                tokio::task::yield_now().await;
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(acked.load(Ordering::SeqCst), N, "every message, once");
    let peak = peak.load(Ordering::SeqCst);
    assert!(peak <= 5, "{peak} held at once, over max_in_flight 5");
    assert!(peak >= 2, "consumers ran concurrently: {peak}");
    assert_eq!(a.stats("jobs").await["message_count"], 0);
}

/// rate_per_sec 5 shared by two servers: the clocks of both move together
/// one second at a time, and in each second concurrent consumers on both
/// (asking for far more) get exactly the bucket's 5; over 10 s, 50. Exact,
/// not a bound: claims of a limited queue take turns on its row, and time
/// moves only when the test moves it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_servers_share_one_token_bucket() {
    let (_db, a, b) = TestServer::two_on_one_database(Default::default).await;
    a.post(
        "/v1/queue/create",
        json!({"name": "paced", "rate_per_sec": 5}),
    )
    .await
    .ok();
    for i in 0..20 {
        let msgs: Vec<Value> = (0..10).map(|j| json!({"payload": i * 10 + j})).collect();
        a.publish_batch("paced", &msgs).await;
    }
    let mut total = 0;
    for second in 0..10 {
        a.clock.advance(SignedDuration::from_secs(1));
        b.clock.advance(SignedDuration::from_secs(1));
        let mut calls = Vec::new();
        for c in 0..6 {
            let s = if c % 2 == 0 { &a } else { &b };
            let conn = (s.http.clone(), s.url(""), a.key.clone());
            calls.push(tokio::spawn(async move {
                let r = post(
                    &conn,
                    "/v1/queue/consume",
                    json!({"queue": "paced", "max_messages": 10}),
                )
                .await;
                r["data"]["items"].as_array().unwrap().len()
            }));
        }
        let mut this_second = 0;
        for c in calls {
            this_second += c.await.unwrap();
        }
        assert_eq!(this_second, 5, "second {second}");
        total += this_second;
    }
    assert_eq!(total, 50);
    assert_eq!(a.stats("paced").await["in_flight"], 50);
}
