//! Deliveries live in the database: a server stopped while its endpoint
//! holds a delivery neither loses the message nor settles it; a new server
//! on the same store delivers it again once the lease has run out (at least
//! once) and acks it, once. A delivery that outlives its lease cannot ack
//! the message out from under the next one.

use jiff::SignedDuration;
use onceq_store::QueueRef;
use serde_json::json;

use super::receiver::{Answer, Receiver};
use super::{assert_delivery, config, jobs_subscribed, stats_until};
use crate::{
    both,
    harness::{Backend, TestServer, fresh_store},
};

async fn restart_mid_delivery_redelivers_once_the_lease_ends(b: Backend) {
    let handle = fresh_store(b).await;
    let store = handle.store.clone();
    let hook = Receiver::start([Answer::Held], Answer::Status(200)).await;

    let first = TestServer::on_store(store.clone(), config()).await;
    jobs_subscribed(&first, &hook.url("/hook"), json!({"timeout_seconds": 5})).await;
    let id = first.publish("jobs", json!({"n": 1})).await;
    let seen = hook.wait_for(1).await;
    assert_delivery(&seen[0], "jobs", &id, json!({"n": 1}), 1, first.clock.now());

    // The server stops while the endpoint still holds the request.
    let t0 = first.clock.now();
    first.stop().await;
    // The endpoint answers 200 to a server that is gone: nothing settles
    // the message, which stays leased to the stopped server's delivery.
    hook.release(1);
    let q = QueueRef::new("alpha", "jobs");
    let stats = store.queue_stats(&q, t0).await.unwrap();
    assert_eq!((stats.in_flight, stats.message_count), (1, 1));
    // Until its lease (5 s + 30 s margin) has run out, it stays there.
    let later = t0 + SignedDuration::from_secs(34);
    assert_eq!(store.lease_expire(later, 100).await.unwrap().requeued, 0);
    assert_eq!(store.queue_stats(&q, later).await.unwrap().in_flight, 1);

    // A new server on the same store, once the lease has run out: its
    // lease reaper returns the message and its dispatcher delivers it.
    let restart = t0 + SignedDuration::from_secs(36);
    let second = TestServer::on_store_at(store.clone(), config(), restart).await;
    let seen = hook.wait_for(2).await;
    assert_delivery(&seen[1], "jobs", &id, json!({"n": 1}), 2, restart);
    let stats = stats_until(&second, "jobs", |st| st["message_count"] == 0).await;
    assert_eq!(stats["dead_lettered"], 0);
    assert_eq!(hook.seen().len(), 2);
    drop(handle);
}
both!(restart_mid_delivery_redelivers_once_the_lease_ends);

async fn a_delivery_that_outlives_its_lease_cannot_ack(b: Backend) {
    let s = TestServer::start_with(b, config()).await;
    let hook = Receiver::start([Answer::Held, Answer::Held], Answer::Status(200)).await;
    jobs_subscribed(
        &s,
        &hook.url("/hook"),
        json!({"timeout_seconds": 30, "max_in_flight": 2}),
    )
    .await;
    // A replay of this publish tells the message's state.
    let publish_first = || {
        s.post(
            "/v1/queue/publish",
            json!({"queue": "jobs", "payload": {"n": 1}, "idempotency_key": "first"}),
        )
    };
    let first = publish_first().await.data()["message_id"]
        .as_str()
        .unwrap()
        .to_owned();
    hook.wait_for(1).await;

    // Delivery 1's lease ends while the endpoint holds it (here a nack
    // without receipt ends it; a clock jump past the lease would too). The
    // message is delivered again, under a new lease, and held too: both
    // slots are busy.
    let r = s
        .post(
            "/v1/queue/nack",
            json!({"queue": "jobs", "message_id": first}),
        )
        .await;
    assert_eq!(r.data()["requeued"], true, "{}", r.body);
    let seen = hook.wait_for(2).await;
    assert_eq!(seen[1].message_id(), first);
    assert_eq!(seen[1].delivery_count(), 2);
    let second = s.publish("jobs", json!({"n": 2})).await;

    // Delivery 1 gets its 200 (held requests are released in arrival
    // order). Its ack names the lease that ended and must not delete the
    // message delivery 2 holds. Its slot frees up only after that ack, so
    // the second message's delivery comes after it.
    hook.release(1);
    assert_eq!(hook.wait_for(3).await[2].message_id(), second);
    let replay = publish_first().await;
    assert_eq!(
        (&replay.data()["status"], &replay.data()["delivery_count"]),
        (&json!("in_flight"), &json!(2)),
        "the stale ack changed nothing: {}",
        replay.body
    );

    // Delivery 2's 200 acks it.
    hook.release(1);
    stats_until(&s, "jobs", |st| st["message_count"] == 0).await;
    assert_eq!(publish_first().await.data()["status"], "gone");
    let seen: Vec<_> = hook
        .seen()
        .iter()
        .map(|d| (d.message_id(), d.delivery_count()))
        .collect();
    assert_eq!(seen.len(), 3, "{seen:?}");
}
both!(a_delivery_that_outlives_its_lease_cannot_ack);
