//! Two servers on one PostgreSQL database: each event is delivered once
//! (their claims split the outbox), whichever server recorded it, and a
//! webhook registered on one is heard by the other within its scan.

use std::collections::HashSet;

use serde_json::json;

use super::{attempts_until, register};
use crate::{harness::TestServer, push::receiver::Receiver};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn each_event_delivered_once() {
    let (_db, a, b) = TestServer::two_on_one_database(crate::push::config).await;
    let rx = Receiver::answering(200).await;
    let hook = register(&a, &rx.url("/in"), json!(["queue.created"])).await;
    let id = hook["id"].as_str().unwrap();
    // b hears of the webhook registered on a within its scan interval.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    while !b.state.events.listeners.wants("alpha", "queue.created") {
        assert!(
            tokio::time::Instant::now() < deadline,
            "b never saw the webhook"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    for i in 0..20 {
        let s = if i % 2 == 0 { &a } else { &b };
        s.post("/v1/queue/create", json!({"name": format!("q{i}")}))
            .await
            .ok();
    }
    let seen = rx.wait_for(20).await;
    // Every attempt settled and the outbox empty: nothing left to send
    // again, so what the receiver has is all it will get.
    let attempts = attempts_until(&a, id, |a| a.len() >= 20).await;
    assert!(attempts.iter().all(|a| a["outcome"] == "delivered"));
    let far = a.clock.now() + jiff::SignedDuration::from_hours(48);
    let left = a
        .state
        .store()
        .webhook_delivery_claim(onceq_store::WebhookDeliveryClaim {
            now: far,
            claim_until: far,
            limit: 100,
            per_project: u32::MAX,
            project_room: Vec::new(),
        })
        .await
        .unwrap();
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(attempts.len(), 20);
    let ids: HashSet<_> = seen
        .iter()
        .map(|s| s.header("onceq-event-id").to_owned())
        .collect();
    assert_eq!(ids.len(), 20);
    assert_eq!(rx.seen().len(), 20, "no event delivered twice");
}
