//! Events delivered to a local receiver: signed, with a stable event id;
//! retried after a 500 and listed in `deliveries`; given up after the
//! event's age limit; `test` sent at once; the events of queues, of nacks
//! with an error and of lease expiry; nothing for types nobody listens to.

use jiff::SignedDuration;
use serde_json::{Value, json};

use super::{assert_event, attempts_until, register};
use crate::{
    both,
    harness::{Backend, TestServer},
    push::receiver::{Answer, Receiver},
};

/// Longer than any retry delay (the backoff's cap is 1 h).
const PAST_ANY_RETRY: SignedDuration = SignedDuration::from_hours(2);

fn id(hook: &Value) -> String {
    hook["id"].as_str().unwrap().to_owned()
}

async fn queue_events_are_delivered_signed(b: Backend) {
    let s = TestServer::start_with(b, crate::push::config()).await;
    let rx = Receiver::answering(204).await;
    let hook = register(
        &s,
        &rx.url("/in"),
        json!(["queue.created", "queue.deleted"]),
    )
    .await;
    s.post("/v1/queue/create", json!({"name": "jobs"}))
        .await
        .ok();
    let seen = rx.wait_for(1).await;
    let body = assert_event(&seen[0], &id(&hook), "queue.created");
    assert_eq!(body["data"], json!({"queue": "jobs"}));
    assert_eq!(seen[0].header("onceq-attempt"), "1");
    s.post("/v1/queue/delete", json!({"queue": "jobs"}))
        .await
        .ok();
    let seen = rx.wait_for(2).await;
    let body = assert_event(&seen[1], &id(&hook), "queue.deleted");
    assert_eq!(
        body["data"],
        json!({"queue": "jobs", "messages_deleted": 0})
    );
    let attempts = attempts_until(&s, &id(&hook), |a| a.len() == 2).await;
    assert_eq!(attempts[0]["event"], "queue.deleted", "newest first");
    assert_eq!(attempts[0]["outcome"], "delivered");
    assert_eq!(attempts[0]["status"], 204);
    assert_eq!(attempts[0]["event_id"], body["id"]);
    assert!(attempts[0]["latency_ms"].as_i64().unwrap() >= 0);
    assert!(attempts[0].get("error").is_none());
}
both!(queue_events_are_delivered_signed);

async fn retried_after_a_500_with_the_same_event_id(b: Backend) {
    let s = TestServer::start_with(b, crate::push::config()).await;
    let rx = Receiver::start([Answer::Status(500)], Answer::Status(200)).await;
    let hook = register(&s, &rx.url("/in"), json!(["*"])).await;
    s.post("/v1/queue/create", json!({"name": "jobs"}))
        .await
        .ok();
    let first = rx.wait_for(1).await.remove(0);
    let retrying = attempts_until(&s, &id(&hook), |a| a.len() == 1).await;
    assert_eq!(retrying[0]["outcome"], "retrying");
    assert_eq!(retrying[0]["status"], 500);
    assert!(retrying[0]["error"].as_str().unwrap().contains("500"));
    // Not before its backoff.
    assert_eq!(rx.seen().len(), 1);
    s.clock.advance(PAST_ANY_RETRY);
    let second = rx.wait_for(2).await.remove(1);
    assert_event(&second, &id(&hook), "queue.created");
    assert_eq!(
        second.header("onceq-event-id"),
        first.header("onceq-event-id")
    );
    assert_eq!(
        second.json(),
        first.json(),
        "the same body on every attempt"
    );
    assert_eq!(second.header("onceq-attempt"), "2");
    let attempts = attempts_until(&s, &id(&hook), |a| a.len() == 2).await;
    let outcomes: Vec<_> = attempts
        .iter()
        .map(|a| (a["attempt"].clone(), a["outcome"].clone()))
        .collect();
    assert_eq!(
        outcomes,
        [
            (json!(2), json!("delivered")),
            (json!(1), json!("retrying"))
        ]
    );
    // Delivered: never sent again.
    s.clock.advance(PAST_ANY_RETRY);
    s.post(
        &format!("/v1/account/webhooks/test/{}", id(&hook)),
        json!({}),
    )
    .await
    .ok();
    assert_eq!(rx.seen().len(), 3);
    assert_eq!(rx.seen()[2].json()["type"], "webhook.test");
}
both!(retried_after_a_500_with_the_same_event_id);

async fn given_up_once_too_old(b: Backend) {
    let s = TestServer::start_with(b, crate::push::config()).await;
    let rx = Receiver::answering(503).await;
    let hook = register(&s, &rx.url("/in"), json!(["queue.created"])).await;
    s.post("/v1/queue/create", json!({"name": "jobs"}))
        .await
        .ok();
    rx.wait_for(1).await;
    attempts_until(&s, &id(&hook), |a| a.len() == 1).await;
    s.clock.advance(SignedDuration::from_hours(25));
    rx.wait_for(2).await;
    let attempts = attempts_until(&s, &id(&hook), |a| a.len() == 2).await;
    assert_eq!(attempts[0]["outcome"], "gave_up");
    s.clock.advance(SignedDuration::from_hours(25));
    // A test event goes through the same dispatcher-free path and proves
    // the given-up one was not sent again meanwhile.
    s.post(
        &format!("/v1/account/webhooks/test/{}", id(&hook)),
        json!({}),
    )
    .await
    .ok();
    let seen = rx.seen();
    assert_eq!(seen.len(), 3, "given up: not attempted again");
    assert_eq!(seen[2].json()["type"], "webhook.test");
}
both!(given_up_once_too_old);

async fn test_sends_now_and_answers_the_attempt(b: Backend) {
    let s = TestServer::start_with(b, crate::push::config()).await;
    let ok = Receiver::answering(200).await;
    let hook = register(&s, &ok.url("/in"), json!(["queue.deleted"])).await;
    let r = s
        .post(
            &format!("/v1/account/webhooks/test/{}", id(&hook)),
            json!({}),
        )
        .await;
    r.ok();
    let attempt = r.data().clone();
    assert_eq!(attempt["outcome"], "delivered");
    assert_eq!(attempt["status"], 200);
    assert_eq!(attempt["event"], "webhook.test");
    // Sent before the answer, whatever the webhook lists.
    let seen = ok.seen();
    assert_eq!(seen.len(), 1);
    let body = assert_event(&seen[0], &id(&hook), "webhook.test");
    assert_eq!(body["data"]["webhook_id"], id(&hook).as_str());
    assert_eq!(attempt["event_id"], body["id"]);

    let failing = Receiver::answering(500).await;
    let bad = register(&s, &failing.url("/in"), json!(["*"])).await;
    let r = s
        .post(
            &format!("/v1/account/webhooks/test/{}", id(&bad)),
            json!({}),
        )
        .await;
    let attempt = r.ok().data().clone();
    assert_eq!(attempt["outcome"], "retrying");
    assert_eq!(attempt["status"], 500);
    assert!(attempt["error"].as_str().unwrap().contains("500"));
    let listed = attempts_until(&s, &id(&bad), |a| !a.is_empty()).await;
    assert_eq!(listed[0]["event_id"], attempt["event_id"]);
}
both!(test_sends_now_and_answers_the_attempt);

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
        .store
        .webhook_delivery_claim(onceq_store::WebhookDeliveryClaim {
            now: s.clock.now(),
            claim_until: s.clock.now(),
            limit: 100,
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
        .store
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
        .store
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

/// The SSRF guard is checked again at each attempt: a webhook whose loopback
/// URL the operator does not (or no longer) allow is never reached, and its
/// attempts say why.
async fn the_guard_refuses_loopback_at_delivery(b: Backend) {
    let config = onceq_server::ServerConfig {
        push: onceq_server::push::PushConfig {
            allow_loopback: false,
            ..crate::push::config().push
        },
        ..onceq_server::ServerConfig::default()
    };
    let s = TestServer::start_with(b, config).await;
    let rx = Receiver::answering(200).await;
    // Stored as a server allowing loopback would have stored it.
    let hook = s
        .state
        .store
        .webhook_insert(onceq_store::WebhookInsert {
            project: "alpha".into(),
            url: rx.url("/in"),
            events: vec!["*".into()],
            secret: super::SECRET.into(),
            description: String::new(),
            headers: None,
            max_per_project: 20,
            now: s.clock.now(),
        })
        .await
        .unwrap();
    let listening = || s.state.events.listeners.wants("alpha", "queue.created");
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    while !listening() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the cache never saw it"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    s.post("/v1/queue/create", json!({"name": "jobs"}))
        .await
        .ok();
    let attempts = attempts_until(&s, &hook.webhook_id, |a| !a.is_empty()).await;
    assert_eq!(attempts[0]["outcome"], "retrying");
    assert!(attempts[0].get("status").is_none());
    let error = attempts[0]["error"].as_str().unwrap();
    assert!(error.contains("loopback"), "{error}");
    assert!(rx.seen().is_empty(), "never reached");
}
both!(the_guard_refuses_loopback_at_delivery);
