//! Push subscriptions over real HTTP, on both backends: the subscription
//! calls and their refusals (`api`), deliveries against a local webhook
//! receiver that fails, times out and accepts, with signatures and the DLQ
//! (`delivery`), a server restart mid-delivery and a delivery outliving its
//! lease (`restart`), bounded concurrency, isolation between queues, FIFO
//! order and two servers on one database (`concurrency`), and the docs'
//! JavaScript verification snippet run by Node.js (`js_snippet`).

mod api;
mod concurrency;
mod delivery;
mod js_snippet;
pub mod receiver;
mod restart;

use std::time::Duration;

use onceq_server::{ServerConfig, push::PushConfig};
use serde_json::{Value, json};

use crate::harness::TestServer;
use receiver::Seen;

/// The secret the tests subscribe with.
pub const SECRET: &str = "test-secret-0123456789";

/// A server that may deliver to the receivers on 127.0.0.1, scans often
/// (tests wait on real time for the dispatcher's polls, never on the
/// clock), and abandons deliveries at once when stopped.
pub fn config() -> ServerConfig {
    ServerConfig {
        push: PushConfig {
            allow_loopback: true,
            scan_interval: Duration::from_millis(20),
            shutdown_grace: Duration::ZERO,
            ..PushConfig::default()
        },
        ..ServerConfig::default()
    }
}

/// Subscribes `url` to `queue` (alpha) with [`SECRET`] and `extra` fields;
/// returns the answer's data.
pub async fn subscribe(s: &TestServer, queue: &str, url: &str, extra: Value) -> Value {
    let mut body = json!({"url": url, "secret": SECRET});
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    let r = s
        .post(&format!("/v1/queue/push_subscribe/{queue}"), body)
        .await;
    r.ok();
    r.data().clone()
}

/// Creates queue `jobs` (every delivery test's queue) and subscribes `url`
/// to it with `extra`.
pub async fn jobs_subscribed(s: &TestServer, url: &str, extra: Value) {
    s.post("/v1/queue/create", json!({"name": "jobs"}))
        .await
        .ok();
    subscribe(s, "jobs", url, extra).await;
}

/// Polls the queue's stats (every 10 ms, 30 s at most) until `done` holds.
pub async fn stats_until(s: &TestServer, queue: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let stats = s.stats(queue).await;
        if done(&stats) {
            return stats;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "stats of {queue} never got there: {stats}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Asserts that `seen` is a delivery of `message_id` from `queue` with
/// `payload`, its `delivery_count`-th, signed with [`SECRET`] at the
/// server's clock `now`.
pub fn assert_delivery(
    seen: &Seen,
    queue: &str,
    message_id: &str,
    payload: Value,
    delivery_count: i64,
    now: jiff::Timestamp,
) {
    assert_eq!(
        seen.json(),
        json!({"message_id": message_id, "queue": queue, "payload": payload, "delivery_count": delivery_count, "headers": {}})
    );
    assert_eq!(seen.header("content-type"), "application/json");
    assert_eq!(seen.header("onceq-message-id"), message_id);
    assert_eq!(
        seen.header("onceq-delivery-count"),
        delivery_count.to_string()
    );
    assert!(seen.header("onceq-subscription-id").starts_with("psub_"));
    assert_eq!(seen.header("onceq-timestamp"), now.as_second().to_string());
    assert!(seen.header("onceq-signature").starts_with("v1="));
    assert_signed(seen, now);
}

/// Checks a delivery's signature as a receiver would, at `now`.
pub fn assert_signed(seen: &Seen, now: jiff::Timestamp) {
    onceq::push::verify_request(
        SECRET,
        &seen.headers,
        &seen.body,
        now,
        onceq::push::DEFAULT_TOLERANCE,
    )
    .expect("the signature verifies");
}
