//! Events live in the database: a server stopped while an endpoint holds an
//! attempt neither loses the event nor settles it; a new server on the same
//! store attempts it again once the claim has run out, with the same event
//! id and body (at least once), and then never again.

use jiff::SignedDuration;
use serde_json::json;

use super::{assert_event, attempts_until, register};
use crate::{
    both,
    harness::{Backend, TestServer, fresh_store},
    push::receiver::{Answer, Receiver},
};

async fn restart_mid_attempt_delivers_after_the_claim(b: Backend) {
    let handle = fresh_store(b).await;
    let store = handle.store.clone();
    let rx = Receiver::start([Answer::Held], Answer::Status(200)).await;
    let first = TestServer::on_store(store.clone(), crate::push::config()).await;
    let hook = register(&first, &rx.url("/in"), json!(["queue.created"])).await;
    let id = hook["id"].as_str().unwrap().to_owned();
    first
        .post("/v1/queue/create", json!({"name": "jobs"}))
        .await
        .ok();
    let seen = rx.wait_for(1).await;
    let t0 = first.clock.now();
    first.stop().await;
    // Answered to a server that is gone: nothing is settled.
    rx.release(1);
    let claim = |at| onceq_store::WebhookDeliveryClaim {
        now: at,
        claim_until: at,
        limit: 10,
        per_project: u32::MAX,
        project_room: Vec::new(),
    };
    // Still held by the stopped server's claim (30 s + 30 s).
    let held = t0 + SignedDuration::from_secs(59);
    assert!(
        store
            .webhook_delivery_claim(claim(held))
            .await
            .unwrap()
            .is_empty()
    );

    let restart = t0 + SignedDuration::from_secs(61);
    let second = TestServer::on_store_at(store.clone(), crate::push::config(), restart).await;
    let again = rx.wait_for(2).await.remove(1);
    assert_event(&again, &id, "queue.created");
    assert_eq!(
        again.header("onceq-event-id"),
        seen[0].header("onceq-event-id")
    );
    assert_eq!(again.body, seen[0].body);
    assert_eq!(again.header("onceq-attempt"), "2");
    let attempts = attempts_until(&second, &id, |a| !a.is_empty()).await;
    assert_eq!(
        attempts.len(),
        1,
        "the abandoned attempt was never settled: {attempts:?}"
    );
    assert_eq!(attempts[0]["outcome"], "delivered");
    let far = restart + SignedDuration::from_hours(48);
    assert!(
        store
            .webhook_delivery_claim(claim(far))
            .await
            .unwrap()
            .is_empty(),
        "delivered: gone"
    );
    assert_eq!(rx.seen().len(), 2);
    drop(handle);
}
both!(restart_mid_attempt_delivers_after_the_claim);
