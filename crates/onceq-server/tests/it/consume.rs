//! consume, ack, nack, extend, long polling, lease expiry and the DLQ rule.
//!
//! Over 400 lines: consuming and its leases are one conversation with the
//! server; the tests follow it in order.

use std::time::Duration;

use serde_json::{Value, json};

use crate::{
    both,
    harness::{Backend, TestServer},
};

async fn consume(s: &TestServer, body: Value) -> Vec<Value> {
    let r = s.post("/v1/queue/consume", body).await;
    r.ok();
    r.data()["items"].as_array().unwrap().clone()
}

async fn consume_hands_out_under_a_lease(b: Backend) {
    let s = TestServer::in_process(b).await;
    for n in 0..12 {
        s.publish("q", json!({"n": n})).await;
    }
    let first = consume(
        &s,
        json!({"queue": "q", "max_messages": 10, "visibility_timeout": 60}),
    )
    .await;
    assert_eq!(first.len(), 10);
    for (i, m) in first.iter().enumerate() {
        assert_eq!(m["payload"], json!({"n": i}), "oldest first");
        assert_eq!(m["status"], "in_flight");
        assert_eq!(m["delivery_count"], 1);
        assert!(m["receipt"].as_str().unwrap().starts_with("rcpt_"));
        let lease: jiff::Timestamp = m["lease_expires_at"].as_str().unwrap().parse().unwrap();
        assert_eq!(lease, s.clock.now() + jiff::SignedDuration::from_secs(60));
    }
    let rest = consume(&s, json!({"queue": "q", "max_messages": 10})).await;
    assert_eq!(rest.len(), 2, "leased messages are invisible");
    assert!(consume(&s, json!({"queue": "q"})).await.is_empty());
    let st = s.stats("q").await;
    assert_eq!(
        (st["in_flight"].as_i64(), st["message_count"].as_i64()),
        (Some(12), Some(12))
    );

    for bad in [
        json!({"queue": "q", "max_messages": 0}),
        json!({"queue": "q", "max_messages": 11}),
    ] {
        let msg = s
            .post("/v1/queue/consume", bad)
            .await
            .err(400, "INVALID_PARAMS");
        assert!(msg.contains("max_messages"), "{msg}");
    }
    let msg = s
        .post(
            "/v1/queue/consume",
            json!({"queue": "q", "wait_seconds": 21}),
        )
        .await
        .err(400, "INVALID_PARAMS");
    assert!(msg.contains("wait_seconds"));
    let msg = s
        .post(
            "/v1/queue/consume",
            json!({"queue": "q", "visibility_timeout": 43_201}),
        )
        .await
        .err(400, "INVALID_PARAMS");
    assert!(msg.contains("visibility_timeout"));
    s.post("/v1/queue/consume", json!({"queue": "missing"}))
        .await
        .err(404, "QUEUE_NOT_FOUND");
}
both!(consume_hands_out_under_a_lease);

async fn priority_goes_first(b: Backend) {
    let s = TestServer::in_process(b).await;
    for (p, name) in [(0, "low"), (5, "high"), (0, "low2"), (9, "top")] {
        s.post(
            "/v1/queue/publish",
            json!({"queue": "q", "payload": name, "priority": p}),
        )
        .await
        .ok();
    }
    let got: Vec<Value> = consume(&s, json!({"queue": "q", "max_messages": 10}))
        .await
        .into_iter()
        .map(|m| m["payload"].clone())
        .collect();
    assert_eq!(
        got,
        [json!("top"), json!("high"), json!("low"), json!("low2")]
    );
}
both!(priority_goes_first);

async fn ack_checks_the_receipt(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.publish("q", json!(1)).await;
    let m = consume(&s, json!({"queue": "q"})).await.remove(0);
    let ack = |receipt: Value| {
        s.post(
            "/v1/queue/ack",
            json!({"queue": "q", "message_id": m["message_id"], "receipt": receipt}),
        )
    };
    assert_eq!(ack(json!("rcpt_wrong")).await.data()["acked"], false);
    assert_eq!(s.stats("q").await["in_flight"], 1);
    assert_eq!(ack(m["receipt"].clone()).await.data()["acked"], true);
    assert_eq!(ack(m["receipt"].clone()).await.data()["acked"], false);
    assert_eq!(s.stats("q").await["message_count"], 0);
    // without a receipt (the seed's worker) an in-flight message is acked
    s.publish("q", json!(2)).await;
    let m2 = consume(&s, json!({"queue": "q"})).await.remove(0);
    let r = s
        .post(
            "/v1/queue/ack",
            json!({"queue": "q", "message_id": m2["message_id"]}),
        )
        .await;
    assert_eq!(r.data()["acked"], true);
    let msg = s
        .post("/v1/queue/ack", json!({"queue": "q"}))
        .await
        .err(400, "INVALID_PARAMS");
    assert!(msg.contains("message_id"));
}
both!(ack_checks_the_receipt);

async fn late_ack_cannot_delete_the_next_holders_message(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.publish("q", json!("job")).await;
    let first = consume(&s, json!({"queue": "q", "visibility_timeout": 10}))
        .await
        .remove(0);
    s.expire_leases_after(11).await;
    let second = consume(&s, json!({"queue": "q", "visibility_timeout": 10}))
        .await
        .remove(0);
    assert_eq!(second["message_id"], first["message_id"]);
    assert_eq!(second["delivery_count"], 2);
    let late = s
        .post(
            "/v1/queue/ack",
            json!({"queue": "q", "message_id": first["message_id"], "receipt": first["receipt"]}),
        )
        .await;
    assert_eq!(late.data()["acked"], false);
    let ext = s
        .post("/v1/queue/extend", json!({"queue": "q", "message_id": first["message_id"], "receipt": first["receipt"], "visibility_timeout": 30}))
        .await;
    assert_eq!(ext.data()["extended"], false);
    let now = s
        .post(
            "/v1/queue/ack",
            json!({"queue": "q", "message_id": second["message_id"], "receipt": second["receipt"]}),
        )
        .await;
    assert_eq!(now.data()["acked"], true);
}
both!(late_ack_cannot_delete_the_next_holders_message);

async fn nack_requeues_delays_or_dead_letters(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.publish("q", json!("a")).await;
    let m = consume(&s, json!({"queue": "q"})).await.remove(0);
    let r = s
        .post(
            "/v1/queue/nack",
            json!({"queue": "q", "message_id": m["message_id"], "receipt": m["receipt"]}),
        )
        .await;
    assert_eq!(
        r.data(),
        &json!({"nacked": true, "requeued": true, "dead_lettered": false, "delivery_count": 1})
    );
    let m = consume(&s, json!({"queue": "q"})).await.remove(0);
    assert_eq!(m["delivery_count"], 2);
    // delayed requeue
    let r = s
        .post(
            "/v1/queue/nack",
            json!({"queue": "q", "message_id": m["message_id"], "delay_seconds": 30}),
        )
        .await;
    assert_eq!(r.data()["requeued"], true);
    assert_eq!(s.stats("q").await["delayed"], 1);
    assert!(consume(&s, json!({"queue": "q"})).await.is_empty());
    s.clock.advance(jiff::SignedDuration::from_secs(31));
    let m = consume(&s, json!({"queue": "q"})).await.remove(0);
    // requeue false: straight to the DLQ
    let r = s
        .post(
            "/v1/queue/nack",
            json!({"queue": "q", "message_id": m["message_id"], "requeue": false}),
        )
        .await;
    assert_eq!(r.data()["dead_lettered"], true);
    let st = s.stats("q").await;
    assert_eq!(
        (st["message_count"].as_i64(), st["dead_lettered"].as_i64()),
        (Some(0), Some(1))
    );
    let dlq = consume(&s, json!({"queue": "q-dlq"})).await;
    assert_eq!(dlq[0]["message_id"], m["message_id"]);
    assert_eq!(dlq[0]["payload"], "a");
    // a nack of a message nobody holds does nothing
    let r = s
        .post(
            "/v1/queue/nack",
            json!({"queue": "q", "message_id": "qmsg_nope"}),
        )
        .await;
    assert_eq!(r.data()["nacked"], false);
    let msg = s
        .post(
            "/v1/queue/nack",
            json!({"queue": "q", "message_id": "x", "delay_seconds": -1}),
        )
        .await
        .err(400, "INVALID_PARAMS");
    assert!(msg.contains("delay_seconds"));
}
both!(nack_requeues_delays_or_dead_letters);

async fn fourth_failure_dead_letters(b: Backend) {
    let s = TestServer::in_process(b).await;
    let id = s
        .publish("api-enqueue-jobs", json!({"job": "export"}))
        .await;
    // three nacks requeue, the fourth failure (a lease expiry) dead-letters
    for n in 1..=3 {
        let m = consume(&s, json!({"queue": "api-enqueue-jobs"}))
            .await
            .remove(0);
        assert_eq!(m["delivery_count"], n);
        let r = s
            .post(
                "/v1/queue/nack",
                json!({"queue": "api-enqueue-jobs", "message_id": id, "receipt": m["receipt"]}),
            )
            .await;
        assert_eq!(r.data()["requeued"], true, "failure {n} requeues");
    }
    let m = consume(
        &s,
        json!({"queue": "api-enqueue-jobs", "visibility_timeout": 5}),
    )
    .await
    .remove(0);
    assert_eq!(m["delivery_count"], 4);
    s.expire_leases_after(6).await;
    let st = s.stats("api-enqueue-jobs").await;
    assert_eq!(st["message_count"], 0);
    assert_eq!(st["dead_lettered"], 1);
    assert_eq!(st["dead_letter_queue"], "api-enqueue-jobs-dlq");
    // redrive brings it back with a fresh count
    let r = s
        .post("/v1/queue/dlq/redrive/api-enqueue-jobs", json!({}))
        .await;
    assert_eq!(
        r.data(),
        &json!({"queue": "api-enqueue-jobs", "dead_letter_queue": "api-enqueue-jobs-dlq", "redriven": 1})
    );
    let m = consume(&s, json!({"queue": "api-enqueue-jobs"}))
        .await
        .remove(0);
    assert_eq!(
        (m["message_id"].as_str(), m["delivery_count"].as_i64()),
        (Some(id.as_str()), Some(1))
    );
}
both!(fourth_failure_dead_letters);

async fn expired_leases_return_without_anyone_calling(b: Backend) {
    let config = onceq_server::ServerConfig {
        lease_reap_interval: Duration::from_millis(50),
        ..Default::default()
    };
    let s = TestServer::in_process_with(b, config).await;
    s.publish("q", json!(1)).await;
    consume(&s, json!({"queue": "q", "visibility_timeout": 1}))
        .await
        .remove(0);
    s.clock.advance(jiff::SignedDuration::from_secs(2));
    // the background reaper, not the test, returns it
    let mut available = 0;
    for _ in 0..200 {
        available = s.stats("q").await["available"].as_i64().unwrap();
        if available == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(available, 1, "the reaper never returned the expired lease");
}
both!(expired_leases_return_without_anyone_calling);

async fn extend_is_a_heartbeat(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.publish("q", json!(1)).await;
    let m = consume(&s, json!({"queue": "q", "visibility_timeout": 10}))
        .await
        .remove(0);
    s.clock.advance(jiff::SignedDuration::from_secs(8));
    let r = s
        .post("/v1/queue/extend", json!({"queue": "q", "message_id": m["message_id"], "receipt": m["receipt"], "visibility_timeout": 30}))
        .await;
    assert_eq!(r.data()["extended"], true);
    let until: jiff::Timestamp = r.data()["lease_expires_at"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(until, s.clock.now() + jiff::SignedDuration::from_secs(30));
    s.expire_leases_after(5).await; // past the first lease's end
    assert_eq!(s.stats("q").await["in_flight"], 1);
    let msg = s
        .post(
            "/v1/queue/extend",
            json!({"queue": "q", "message_id": m["message_id"]}),
        )
        .await
        .err(400, "INVALID_PARAMS");
    assert!(msg.contains("visibility_timeout"));
}
both!(extend_is_a_heartbeat);

/// A consume of `queue` waiting up to 20 s, over its own request.
fn long_poll(s: &TestServer, queue: &str) -> tokio::task::JoinHandle<Value> {
    long_poll_with(s, json!({"queue": queue, "wait_seconds": 20}))
}

/// A consume of `body`, over its own request: its whole answer.
pub fn long_poll_with(s: &TestServer, body: Value) -> tokio::task::JoinHandle<Value> {
    let http = s.http.clone();
    let url = s.url("/v1/queue/consume");
    let key = s.key.clone();
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

async fn long_poll_wakes_on_publish(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.post("/v1/queue/create", json!({"name": "q"})).await.ok();
    let waiter = long_poll(&s, "q");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiter.is_finished(), "an empty long poll must wait");
    s.publish("q", json!("wake")).await;
    let got = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .expect("long poll did not return after a publish")
        .unwrap();
    assert_eq!(got["data"]["items"][0]["payload"], "wake");
    // an empty long poll returns empty when its wait is over
    let items = consume(&s, json!({"queue": "q", "wait_seconds": 1})).await;
    assert!(items.is_empty());
}
both!(long_poll_wakes_on_publish);

/// A message whose lease the reaper ends goes to a consumer already long
/// polling its queue at once, not at the poll's next re-check of the store
/// (here further off than the poll's whole wait).
async fn long_poll_wakes_on_lease_expiry(b: Backend) {
    let config = onceq_server::ServerConfig {
        long_poll_recheck: Duration::from_secs(60),
        lease_reap_interval: Duration::from_secs(3600),
        ..Default::default()
    };
    let s = TestServer::in_process_with(b, config).await;
    s.publish("q", json!("again")).await;
    consume(&s, json!({"queue": "q", "visibility_timeout": 1}))
        .await
        .remove(0);
    let waiter = long_poll(&s, "q");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiter.is_finished(), "the message is still leased");
    s.expire_leases_after(2).await;
    let got = tokio::time::timeout(Duration::from_secs(5), waiter)
        .await
        .expect("long poll did not return after the reaper returned the message")
        .unwrap();
    assert_eq!(got["data"]["items"][0]["payload"], "again");
    assert_eq!(got["data"]["items"][0]["delivery_count"], 2);
}
both!(long_poll_wakes_on_lease_expiry);

/// JSON Schema's `integer` (what /openapi.json says) admits `2.0`; so does
/// the server, for every integer field. A fraction is still refused.
async fn integers_may_carry_a_zero_fraction(b: Backend) {
    let s = TestServer::in_process(b).await;
    for n in 0..3 {
        s.publish("q", json!(n)).await;
    }
    let got = consume(
        &s,
        json!({"queue": "q", "max_messages": 2.0, "visibility_timeout": 60.0}),
    )
    .await;
    assert_eq!(got.len(), 2);
    let msg = s
        .post(
            "/v1/queue/consume",
            json!({"queue": "q", "max_messages": 1.5}),
        )
        .await
        .err(400, "INVALID_PARAMS");
    assert!(
        msg.contains("max_messages") && msg.contains("an integer"),
        "{msg}"
    );
    let r = s
        .post(
            "/v1/queue/publish",
            json!({"queue": "q", "payload": 1, "delay_seconds": 60.0, "priority": -1.0}),
        )
        .await;
    r.ok();
    assert_eq!(r.data()["status"], "delayed");
}
both!(integers_may_carry_a_zero_fraction);
