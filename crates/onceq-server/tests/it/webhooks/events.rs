//! What emits which event, and its `data`: nacks with an error and
//! dead-lettering, lease expiry, failed push deliveries, credit used up;
//! and nothing recorded for types nobody listens to.

use jiff::SignedDuration;
use serde_json::{Value, json};

use super::{attempts_until, register};
use crate::{
    both,
    harness::{Backend, TestServer},
    push::receiver::Receiver,
};

/// Longer than any retry delay (the backoff's cap is 1 h).
const PAST_ANY_RETRY: SignedDuration = SignedDuration::from_hours(2);

fn id(hook: &Value) -> String {
    hook["id"].as_str().unwrap().to_owned()
}

/// Events of `kind` among what `rx` has seen, by body.
fn of_kind(rx: &Receiver, kind: &str) -> Vec<Value> {
    rx.seen()
        .iter()
        .map(|s| s.json())
        .filter(|b| b["type"] == kind)
        .collect()
}

async fn nack_with_an_error_and_dead_lettering(b: Backend) {
    let s = TestServer::start_with(b, crate::push::config()).await;
    let rx = Receiver::answering(200).await;
    register(
        &s,
        &rx.url("/in"),
        json!(["message.failed", "message.dead_lettered"]),
    )
    .await;
    s.post(
        "/v1/queue/create",
        json!({"name": "jobs", "max_retries": 1}),
    )
    .await
    .ok();
    let mid = s.publish("jobs", json!({"n": 1})).await;
    let nack = |error: Option<&str>| {
        let s = &s;
        let error = error.map(str::to_owned);
        async move {
            let r = s.post("/v1/queue/consume", json!({"queue": "jobs"})).await;
            let m = r.ok().data()["items"][0].clone();
            let mut body =
                json!({"queue": "jobs", "message_id": m["message_id"], "receipt": m["receipt"]});
            if let Some(e) = error {
                body["error"] = json!(e);
            }
            s.post("/v1/queue/nack", body).await.ok();
        }
    };
    // Without an error: no message.failed (and not the last hand-out).
    nack(None).await;
    // With one, on the last hand-out: failed, and dead-lettered.
    nack(Some("boom: disk full")).await;
    rx.wait_for(2).await;
    let failed = of_kind(&rx, "message.failed");
    assert_eq!(
        failed.len(),
        1,
        "{:?}",
        rx.seen().iter().map(|s| s.json()).collect::<Vec<_>>()
    );
    assert_eq!(
        failed[0]["data"],
        json!({"queue": "jobs", "reason": "nack", "message_id": mid, "delivery_count": 2,
               "error": "boom: disk full", "count": 1})
    );
    let dead = of_kind(&rx, "message.dead_lettered");
    assert_eq!(
        dead[0]["data"],
        json!({"queue": "jobs", "reason": "nack", "message_id": mid, "delivery_count": 2, "count": 1})
    );
    assert_eq!(rx.seen().len(), 2);
}
both!(nack_with_an_error_and_dead_lettering);

async fn expired_leases(b: Backend) {
    let s = TestServer::start_with(b, crate::push::config()).await;
    let rx = Receiver::answering(200).await;
    register(
        &s,
        &rx.url("/in"),
        json!(["message.failed", "message.dead_lettered"]),
    )
    .await;
    s.post(
        "/v1/queue/create",
        json!({"name": "jobs", "max_retries": 0}),
    )
    .await
    .ok();
    s.publish("jobs", json!({"n": 1})).await;
    s.publish("jobs", json!({"n": 2})).await;
    s.post(
        "/v1/queue/consume",
        json!({"queue": "jobs", "max_messages": 2, "visibility_timeout": 30}),
    )
    .await
    .ok();
    s.expire_leases_after(31).await;
    rx.wait_for(2).await;
    let failed = of_kind(&rx, "message.failed");
    assert_eq!(
        failed[0]["data"],
        json!({"queue": "jobs", "reason": "lease_expired", "count": 2})
    );
    let dead = of_kind(&rx, "message.dead_lettered");
    assert_eq!(
        dead[0]["data"],
        json!({"queue": "jobs", "reason": "lease_expired", "count": 2})
    );
}
both!(expired_leases);

/// A type nobody listens to is not recorded: only the listened-to one
/// arrives, and the outbox holds nothing else.
async fn only_what_is_listened_to(b: Backend) {
    let s = TestServer::start_with(b, crate::push::config()).await;
    let rx = Receiver::answering(200).await;
    let hook = register(&s, &rx.url("/in"), json!(["queue.deleted"])).await;
    s.post("/v1/queue/create", json!({"name": "jobs"}))
        .await
        .ok();
    s.post("/v1/queue/delete", json!({"queue": "jobs"}))
        .await
        .ok();
    rx.wait_for(1).await;
    attempts_until(&s, &id(&hook), |a| a.len() == 1).await;
    s.clock.advance(PAST_ANY_RETRY);
    let claimed = s
        .state
        .store()
        .webhook_delivery_claim(onceq_store::WebhookDeliveryClaim {
            now: s.clock.now(),
            claim_until: s.clock.now(),
            limit: 100,
            per_project: u32::MAX,
            project_room: Vec::new(),
        })
        .await
        .unwrap();
    assert!(claimed.is_empty(), "{claimed:?}");
    let seen = rx.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].json()["type"], "queue.deleted");
}
both!(only_what_is_listened_to);

/// A failed push delivery is a `message.failed` with its reason.
async fn failed_push_delivery(b: Backend) {
    let s = TestServer::start_with(b, crate::push::config()).await;
    let rx = Receiver::answering(200).await;
    register(&s, &rx.url("/in"), json!(["message.failed"])).await;
    let endpoint = Receiver::answering(500).await;
    crate::push::jobs_subscribed(&s, &endpoint.url("/push"), json!({})).await;
    let mid = s.publish("jobs", json!({"n": 1})).await;
    endpoint.wait_for(1).await;
    let seen = rx.wait_for(1).await;
    let body = seen[0].json();
    assert_eq!(body["type"], "message.failed");
    let data = &body["data"];
    assert_eq!(data["reason"], "push");
    assert_eq!(data["queue"], "jobs");
    assert_eq!(data["message_id"], mid.as_str());
    assert_eq!(data["delivery_count"], 1);
    assert!(data["error"].as_str().unwrap().contains("500"), "{data}");
    assert!(
        data["subscription_id"]
            .as_str()
            .unwrap()
            .starts_with("psub_")
    );
}
both!(failed_push_delivery);

/// One `credit.exhausted` per exhaustion, not one per refused call; a
/// raised limit used up again is another.
async fn credit_exhausted_once_per_limit(b: Backend) {
    let config = onceq_server::ServerConfig {
        push: crate::push::config().push,
        ..TestServer::manual_sync(TestServer::priced())
    };
    let s = TestServer::start_with(b, config).await;
    let rx = Receiver::answering(200).await;
    register(&s, &rx.url("/in"), json!(["credit.exhausted"])).await;
    s.state
        .store()
        .project_set_credit("alpha", Some(30))
        .await
        .unwrap();
    s.sync().await;
    let publish = |n: i64| s.post("/v1/queue/publish", json!({"queue": "jobs", "payload": n}));
    publish(1).await.ok();
    publish(2).await.err(402, "INSUFFICIENT_CREDIT");
    publish(3).await.err(402, "INSUFFICIENT_CREDIT");
    let seen = rx.wait_for(1).await;
    let body = seen[0].json();
    assert_eq!(body["type"], "credit.exhausted");
    assert_eq!(
        body["data"],
        json!({"limit_usd": 0.00003, "spent_usd": 0.00002})
    );
    // Raised, then used up again: a second event.
    s.state
        .store()
        .project_set_credit("alpha", Some(40))
        .await
        .unwrap();
    s.sync().await;
    publish(4).await.ok();
    publish(5).await.err(402, "INSUFFICIENT_CREDIT");
    let seen = rx.wait_for(2).await;
    assert_eq!(seen[1].json()["data"]["limit_usd"], 0.00004);
    assert_eq!(
        rx.seen().len(),
        2,
        "refusals under one limit make one event"
    );
}
both!(credit_exhausted_once_per_limit);

async fn pause_and_resume_are_events(b: Backend) {
    let s = TestServer::start_with(b, crate::push::config()).await;
    let rx = Receiver::answering(200).await;
    register(&s, &rx.url("/in"), json!(["queue.paused", "queue.resumed"])).await;
    s.post("/v1/queue/create", json!({"name": "jobs"}))
        .await
        .ok();
    s.post("/v1/queue/pause/jobs", json!({})).await.ok();
    s.post("/v1/queue/resume/jobs", json!({})).await.ok();
    rx.wait_for(2).await;
    for kind in ["queue.paused", "queue.resumed"] {
        let seen = of_kind(&rx, kind);
        assert_eq!(seen.len(), 1, "{kind}: {seen:?}");
        assert_eq!(seen[0]["data"], json!({"queue": "jobs"}), "{kind}");
    }
}
both!(pause_and_resume_are_events);
