//! Events delivered to a local receiver: signed, with a stable event id;
//! retried after a 500 and listed in `deliveries`; given up after the
//! event's age limit; `test` sent at once; the SSRF guard at each attempt.

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
        .store()
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
