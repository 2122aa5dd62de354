//! Deliveries against a local webhook receiver: a failure, a timeout, then
//! an accepted delivery acks the message; every delivery is signed; after
//! the last allowed attempt the message is dead-lettered; an endpoint that
//! refuses connections fails like any other; deleting a subscription stops
//! its deliveries.

use jiff::SignedDuration;
use serde_json::json;

use super::receiver::{Answer, Receiver};
use super::{SECRET, assert_delivery, config, jobs_subscribed, stats_until, subscribe};
use crate::{
    both,
    harness::{Backend, TestServer},
};

/// Longer than any retry delay (the backoff's cap is 1 h).
const PAST_ANY_RETRY: SignedDuration = SignedDuration::from_hours(2);

async fn fails_times_out_then_acks(b: Backend) {
    let s = TestServer::start_with(b, config()).await;
    let hook = Receiver::start(
        [Answer::Status(500), Answer::Hang, Answer::Status(204)],
        Answer::Status(500),
    )
    .await;
    jobs_subscribed(&s, &hook.url("/hook"), json!({"timeout_seconds": 1})).await;
    let id = s.publish("jobs", json!({"n": 1})).await;

    // 1: a 500. The message waits out its backoff, delayed.
    let seen = hook.wait_for(1).await;
    assert_eq!(seen[0].path, "/hook");
    assert_delivery(&seen[0], "jobs", &id, json!({"n": 1}), 1, s.clock.now());
    stats_until(&s, "jobs", |st| st["delayed"] == 1 && st["in_flight"] == 0).await;

    // 2: no answer within timeout_seconds.
    s.clock.advance(PAST_ANY_RETRY);
    let seen = hook.wait_for(2).await;
    assert_delivery(&seen[1], "jobs", &id, json!({"n": 1}), 2, s.clock.now());
    stats_until(&s, "jobs", |st| st["delayed"] == 1 && st["in_flight"] == 0).await;
    // Each failed delivery is an attempt with what failed.
    let m = s.get(&format!("/v1/queue/message/jobs/{id}")).await;
    let attempts = m.ok().data()["attempts"].clone();
    assert_eq!(attempts[0]["outcome"], "push_failed", "{attempts}");
    assert_eq!(attempts[0]["error"], "answered 500 Internal Server Error");
    assert_eq!(attempts[1]["outcome"], "push_failed");
    assert_eq!(attempts[1]["error"], "no answer within 1s");
    assert_eq!(m.data()["last_error"], "no answer within 1s");

    // 3: a 204 acks it.
    s.clock.advance(PAST_ANY_RETRY);
    let seen = hook.wait_for(3).await;
    assert_delivery(&seen[2], "jobs", &id, json!({"n": 1}), 3, s.clock.now());
    let stats = stats_until(&s, "jobs", |st| st["message_count"] == 0).await;
    assert_eq!(stats["dead_lettered"], 0);
    assert_eq!(hook.seen().len(), 3);

    // The signature is over this body and timestamp, with this secret.
    let now = s.clock.now();
    let check = |secret: &str, body: &[u8]| {
        onceq::push::verify_request(
            secret,
            &seen[2].headers,
            body,
            now,
            onceq::push::DEFAULT_TOLERANCE,
        )
    };
    assert_eq!(check(SECRET, &seen[2].body), Ok(()));
    assert_eq!(
        check("another-secret-0123456789", &seen[2].body),
        Err(onceq::push::SignatureError::Mismatch)
    );
    assert_eq!(
        check(SECRET, br#"{"message_id":"qmsg_forged"}"#),
        Err(onceq::push::SignatureError::Mismatch)
    );
    // Replayed an hour later, it is refused.
    assert_eq!(
        onceq::push::verify_request(
            SECRET,
            &seen[2].headers,
            &seen[2].body,
            now + SignedDuration::from_hours(1),
            onceq::push::DEFAULT_TOLERANCE
        ),
        Err(onceq::push::SignatureError::Expired)
    );
}
both!(fails_times_out_then_acks);

async fn dead_letters_after_the_last_attempt(b: Backend) {
    let s = TestServer::start_with(b, config()).await;
    let hook = Receiver::answering(503).await;
    // Two attempts in all.
    s.post(
        "/v1/queue/create",
        json!({"name": "jobs", "max_retries": 1}),
    )
    .await
    .ok();
    subscribe(&s, "jobs", &hook.url("/hook"), json!({})).await;
    let id = s.publish("jobs", json!({"n": 1})).await;

    hook.wait_for(1).await;
    stats_until(&s, "jobs", |st| st["delayed"] == 1).await;
    s.clock.advance(PAST_ANY_RETRY);
    let seen = hook.wait_for(2).await;
    assert_delivery(&seen[1], "jobs", &id, json!({"n": 1}), 2, s.clock.now());
    let stats = stats_until(&s, "jobs", |st| st["dead_lettered"] == 1).await;
    assert_eq!(stats["message_count"], 0);

    // In the DLQ with its id; no further attempt.
    let r = s
        .post("/v1/queue/consume", json!({"queue": "jobs-dlq"}))
        .await;
    r.ok();
    assert_eq!(r.data()["items"][0]["message_id"], id);
    assert_eq!(hook.seen().len(), 2);
}
both!(dead_letters_after_the_last_attempt);

async fn a_refused_connection_is_a_failed_attempt(b: Backend) {
    let s = TestServer::start_with(b, config()).await;
    // A port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    s.post(
        "/v1/queue/create",
        json!({"name": "jobs", "max_retries": 0}),
    )
    .await
    .ok();
    subscribe(
        &s,
        "jobs",
        &format!("http://127.0.0.1:{port}/hook"),
        json!({}),
    )
    .await;
    let id = s.publish("jobs", json!({"n": 1})).await;
    // One attempt allowed: refused, dead-lettered.
    let stats = stats_until(&s, "jobs", |st| st["dead_lettered"] == 1).await;
    assert_eq!(stats["message_count"], 0);
    // The dead letter says why: the connection error, as its last attempt.
    let m = s.get(&format!("/v1/queue/message/jobs/{id}")).await;
    let d = m.ok().data();
    let last_error = d["last_error"].as_str().unwrap_or_default();
    assert!(last_error.starts_with("connection failed"), "{d}");
    assert_eq!(d["attempts"][0]["outcome"], "dead_lettered");
    assert_eq!(d["attempts"][0]["error"], last_error);
}
both!(a_refused_connection_is_a_failed_attempt);

async fn unsubscribing_stops_deliveries(b: Backend) {
    let s = TestServer::start_with(b, config()).await;
    let hook_a = Receiver::answering(200).await;
    let hook_b = Receiver::answering(200).await;
    s.post("/v1/queue/create", json!({"name": "a"})).await.ok();
    s.post("/v1/queue/create", json!({"name": "b"})).await.ok();
    let sub = subscribe(&s, "a", &hook_a.url("/a"), json!({})).await;
    s.publish("a", json!({"n": 1})).await;
    hook_a.wait_for(1).await;
    stats_until(&s, "a", |st| st["message_count"] == 0).await;

    let id = sub["subscription_id"].as_str().unwrap();
    s.post(&format!("/v1/queue/push_unsubscribe/a/{id}"), json!({}))
        .await
        .ok();
    // A subscription made after the unsubscribe is served by a dispatcher
    // scan that no longer lists the first: once `b` gets a delivery, `a`'s
    // subscriber has stopped.
    subscribe(&s, "b", &hook_b.url("/b"), json!({})).await;
    s.publish("b", json!({"n": 1})).await;
    hook_b.wait_for(1).await;
    s.publish("a", json!({"n": 2})).await;
    // A publish wakes a live subscriber at once; `b`'s second delivery is
    // the barrier behind `a`'s publish.
    s.publish("b", json!({"n": 2})).await;
    hook_b.wait_for(2).await;
    assert_eq!(hook_a.seen().len(), 1);
    let stats = s.stats("a").await;
    assert_eq!(
        (stats["available"].as_i64(), stats["in_flight"].as_i64()),
        (Some(1), Some(0))
    );
}
both!(unsubscribing_stops_deliveries);
