//! Concurrency of deliveries: `max_in_flight` bounds them; a dead or slow
//! endpoint on one queue does not hold up another; a FIFO queue's group is
//! delivered in order, one at a time; two servers on one PostgreSQL
//! database deliver each message once between them.

use std::collections::HashSet;

use serde_json::{Value, json};

use super::receiver::{Answer, Receiver};
use super::{assert_signed, config, jobs_subscribed, stats_until, subscribe};
use crate::{
    both,
    harness::{Backend, TestServer},
};

async fn publish_many(s: &TestServer, queue: &str, payloads: impl IntoIterator<Item = Value>) {
    let messages: Vec<Value> = payloads
        .into_iter()
        .map(|p| json!({"payload": p}))
        .collect();
    for chunk in messages.chunks(10) {
        s.publish_batch(queue, chunk).await;
    }
}

async fn max_in_flight_bounds_concurrent_deliveries(b: Backend) {
    let s = TestServer::start_with(b, config()).await;
    let hook = Receiver::start([], Answer::Held).await;
    jobs_subscribed(&s, &hook.url("/hook"), json!({"max_in_flight": 2})).await;
    publish_many(&s, "jobs", (0..6).map(|n| json!({"n": n}))).await;

    // Two held; the other four are not even claimed.
    hook.wait_for(2).await;
    let stats = s.stats("jobs").await;
    assert_eq!(
        (stats["in_flight"].as_i64(), stats["available"].as_i64()),
        (Some(2), Some(4))
    );

    // Each answer frees one slot, which takes the next message.
    for n in 3..=6 {
        hook.release(1);
        hook.wait_for(n).await;
        assert!(s.stats("jobs").await["in_flight"].as_i64().unwrap() <= 2);
    }
    hook.release(2);
    stats_until(&s, "jobs", |st| st["message_count"] == 0).await;
    assert_eq!(hook.peak(), 2);
    let ids: HashSet<String> = hook.seen().iter().map(|d| d.message_id()).collect();
    assert_eq!(ids.len(), 6, "each message delivered once");
}
both!(max_in_flight_bounds_concurrent_deliveries);

async fn a_dead_endpoint_does_not_stall_other_queues(b: Backend) {
    let s = TestServer::start_with(b, config()).await;
    let stuck = Receiver::start([], Answer::Hang).await;
    let fine = Receiver::answering(200).await;
    let refused = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    for q in ["stuck", "fine", "gone"] {
        s.post("/v1/queue/create", json!({"name": q})).await.ok();
    }
    // Never answers: both slots stay busy for the whole timeout.
    subscribe(
        &s,
        "stuck",
        &stuck.url("/hook"),
        json!({"max_in_flight": 2, "timeout_seconds": 300}),
    )
    .await;
    subscribe(&s, "fine", &fine.url("/hook"), json!({"max_in_flight": 2})).await;
    subscribe(
        &s,
        "gone",
        &format!("http://127.0.0.1:{refused}/hook"),
        json!({}),
    )
    .await;
    publish_many(&s, "stuck", (0..5).map(|n| json!({"n": n}))).await;
    publish_many(&s, "gone", (0..5).map(|n| json!({"n": n}))).await;
    stuck.wait_for(2).await;

    publish_many(&s, "fine", (0..20).map(|n| json!({"n": n}))).await;
    fine.wait_for(20).await;
    stats_until(&s, "fine", |st| st["message_count"] == 0).await;
    // Refused connections fail fast: every message is waiting out a retry.
    stats_until(&s, "gone", |st| st["delayed"] == 5).await;
    // And the stuck queue is still stuck, at its two slots.
    let st = s.stats("stuck").await;
    assert_eq!(
        (st["in_flight"].as_i64(), st["available"].as_i64()),
        (Some(2), Some(3))
    );
    assert_eq!(stuck.seen().len(), 2);
}
both!(a_dead_endpoint_does_not_stall_other_queues);

async fn fifo_groups_are_delivered_in_order_one_at_a_time(b: Backend) {
    let s = TestServer::start_with(b, config()).await;
    // The third delivery fails: its message must come back before anything
    // behind it in its group, while the other group goes on.
    let hook = Receiver::start(
        [
            Answer::Status(200),
            Answer::Status(200),
            Answer::Status(500),
        ],
        Answer::Status(200),
    )
    .await;
    s.post(
        "/v1/queue/create",
        json!({"name": "orders", "type": "fifo"}),
    )
    .await
    .ok();
    // A lease (300 s + margin) far longer than the retry's delay, so moving
    // the clock to the retry expires no lease.
    subscribe(
        &s,
        "orders",
        &hook.url("/hook"),
        json!({"max_in_flight": 10, "timeout_seconds": 300}),
    )
    .await;
    let messages: Vec<Value> = (0..5)
        .flat_map(|n| {
            ["a", "b"].map(|g| json!({"payload": {"g": g, "n": n}, "message_group_id": g}))
        })
        .collect();
    s.publish_batch("orders", &messages).await;
    hook.wait_for(3).await;
    stats_until(&s, "orders", |st| st["delayed"] == 1).await;
    // The first retry comes within `retry_base` (5 s).
    s.clock.advance(jiff::SignedDuration::from_secs(10));
    let seen = hook.wait_for(11).await;
    stats_until(&s, "orders", |st| st["message_count"] == 0).await;
    for g in ["a", "b"] {
        let mut order: Vec<i64> = seen
            .iter()
            .map(|d| d.json()["payload"].clone())
            .filter(|p| p["g"] == g)
            .map(|p| p["n"].as_i64().unwrap())
            .collect();
        assert!(order.is_sorted(), "group {g} out of order: {order:?}");
        order.dedup();
        assert_eq!(order, [0, 1, 2, 3, 4], "group {g}");
    }
    assert_eq!(hook.seen().len(), 11);
    // One in flight per group: never more than the two groups at once.
    assert!(hook.peak() <= 2, "peak {}", hook.peak());
}
both!(fifo_groups_are_delivered_in_order_one_at_a_time);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_servers_on_one_database_deliver_each_message_once() {
    let (_handle, a, b) = TestServer::two_on_one_database(config).await;
    let hook = Receiver::answering(200).await;

    jobs_subscribed(&a, &hook.url("/hook"), json!({"max_in_flight": 4})).await;
    // Published through both servers.
    for i in 0..6 {
        let s = if i % 2 == 0 { &a } else { &b };
        publish_many(s, "jobs", (0..10).map(|n| json!({"batch": i, "n": n}))).await;
    }
    let seen = hook.wait_for(60).await;
    stats_until(&a, "jobs", |st| st["message_count"] == 0).await;
    let ids: HashSet<String> = seen.iter().map(|d| d.message_id()).collect();
    assert_eq!(ids.len(), 60);
    assert_eq!(hook.seen().len(), 60, "no message delivered twice");
    for d in &seen {
        assert_eq!(d.delivery_count(), 1);
        let now =
            jiff::Timestamp::from_second(d.header("onceq-timestamp").parse().unwrap()).unwrap();
        assert_signed(d, now);
    }
}
