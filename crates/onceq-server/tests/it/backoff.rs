//! `retry_backoff` on `create` and `update` (queue-api-2.md §6): stored,
//! replaced whole, removed by `null`, each bad field a 400 naming it with
//! nothing stored; and applied over HTTP to a nack without `delay_seconds`,
//! an expired lease and a failed push delivery, timed by the server's clock.

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use crate::{
    both,
    harness::{Backend, TestServer},
    push,
};

fn at(v: &Value) -> Timestamp {
    v.as_str().unwrap().parse().unwrap()
}

async fn message(s: &TestServer, queue: &str, id: &str) -> Value {
    let r = s.get(&format!("/v1/queue/message/{queue}/{id}")).await;
    r.ok();
    r.data().clone()
}

async fn take(s: &TestServer, queue: &str) -> Vec<Value> {
    let r = s
        .post(
            "/v1/queue/consume",
            json!({"queue": queue, "max_messages": 10}),
        )
        .await;
    r.ok();
    r.data()["items"].as_array().unwrap().clone()
}

async fn backoff_is_set_replaced_and_cleared(b: Backend) {
    let s = TestServer::in_process(b).await;
    let r = s
        .post(
            "/v1/queue/create",
            json!({"name": "jobs", "retry_backoff": {"initial_seconds": 2, "max_seconds": 60}}),
        )
        .await;
    let want = json!({"initial_seconds": 2, "multiplier": 2.0, "max_seconds": 60, "jitter": 0.0});
    assert_eq!(r.ok().data()["retry_backoff"], want, "defaults filled in");
    assert_eq!(
        s.get("/v1/queue/get/jobs").await.data()["retry_backoff"],
        want
    );
    assert_eq!(
        s.get("/v1/queue/get/jobs-dlq").await.data()["retry_backoff"],
        Value::Null
    );
    let r = s
        .post(
            "/v1/queue/update",
            json!({"name": "jobs", "max_retries": 5}),
        )
        .await;
    assert_eq!(r.ok().data()["retry_backoff"], want, "left out: kept");
    let r = s
        .post(
            "/v1/queue/update",
            json!({"name": "jobs", "retry_backoff": {"initial_seconds": 1, "multiplier": 1.5,
                   "max_seconds": 30, "jitter": 0.5}}),
        )
        .await;
    assert_eq!(
        r.ok().data()["retry_backoff"],
        json!({"initial_seconds": 1, "multiplier": 1.5, "max_seconds": 30, "jitter": 0.5})
    );
    let r = s
        .post(
            "/v1/queue/update",
            json!({"name": "jobs", "retry_backoff": null}),
        )
        .await;
    assert_eq!(r.ok().data()["retry_backoff"], Value::Null, "null: removed");
}
both!(backoff_is_set_replaced_and_cleared);

async fn backoff_refusals_name_the_field(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.post("/v1/queue/create", json!({"name": "jobs"}))
        .await
        .ok();
    let before = s.get("/v1/queue/get/jobs").await.data().clone();
    let ok = json!({"initial_seconds": 2, "max_seconds": 60});
    let with = |field: &str, value: Value| {
        let mut b = ok.clone();
        b[field] = value;
        b
    };
    let bad: Vec<(Value, &str)> = vec![
        (json!({"max_seconds": 60}), "retry_backoff.initial_seconds"),
        (json!({"initial_seconds": 2}), "retry_backoff.max_seconds"),
        (
            with("initial_seconds", json!(0)),
            "retry_backoff.initial_seconds",
        ),
        (
            with("initial_seconds", json!(1.5)),
            "retry_backoff.initial_seconds",
        ),
        (with("max_seconds", json!(1)), "retry_backoff.max_seconds"),
        (
            with("max_seconds", json!(604_801)),
            "retry_backoff.max_seconds",
        ),
        (with("multiplier", json!(0.5)), "retry_backoff.multiplier"),
        (with("multiplier", json!(11)), "retry_backoff.multiplier"),
        (with("multiplier", json!("x")), "retry_backoff.multiplier"),
        (with("jitter", json!(-0.1)), "retry_backoff.jitter"),
        (with("jitter", json!(1.5)), "retry_backoff.jitter"),
        (json!(5), "retry_backoff"),
    ];
    for (backoff, field) in bad {
        for (path, name) in [("/v1/queue/create", "fresh"), ("/v1/queue/update", "jobs")] {
            let r = s
                .post(path, json!({"name": name, "retry_backoff": backoff}))
                .await;
            let msg = r.err(400, "INVALID_PARAMS");
            assert!(msg.contains(field), "{path} {backoff}: {msg}");
            assert!(r.body["error"]["hint"].is_string(), "{}", r.body);
        }
    }
    assert_eq!(
        s.get("/v1/queue/get/jobs").await.data(),
        &before,
        "unchanged"
    );
    s.get("/v1/queue/get/fresh")
        .await
        .err(404, "QUEUE_NOT_FOUND");
}
both!(backoff_refusals_name_the_field);

/// A nack without delay_seconds waits out the backoff; one with it, and
/// an expired lease, as the contract says.
async fn backoff_times_nacks_and_expired_leases(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.post(
        "/v1/queue/create",
        json!({"name": "jobs", "max_retries": 10,
               "retry_backoff": {"initial_seconds": 10, "multiplier": 3, "max_seconds": 60}}),
    )
    .await
    .ok();
    let id = s.publish("jobs", json!({"n": 1})).await;
    let m = take(&s, "jobs").await.remove(0);
    let r = s
        .post(
            "/v1/queue/nack",
            json!({"queue": "jobs", "message_id": id, "receipt": m["receipt"]}),
        )
        .await;
    assert_eq!(r.ok().data()["requeued"], true);
    let got = message(&s, "jobs", &id).await;
    assert_eq!(got["state"], "delayed");
    assert_eq!(
        at(&got["visible_at"]),
        s.clock.now() + SignedDuration::from_secs(10)
    );
    assert_eq!(s.stats("jobs").await["delayed"], 1);
    s.clock.advance(SignedDuration::from_secs(9));
    assert!(take(&s, "jobs").await.is_empty(), "not before 10 s");
    s.clock.advance(SignedDuration::from_secs(1));
    let m = take(&s, "jobs").await.remove(0);
    assert_eq!(m["delivery_count"], 2);

    // The lease of hand-out 2 expires: 30 s.
    s.expire_leases_after(30).await;
    let got = message(&s, "jobs", &id).await;
    assert_eq!(got["state"], "delayed");
    assert_eq!(
        at(&got["visible_at"]),
        s.clock.now() + SignedDuration::from_secs(30)
    );
    s.clock.advance(SignedDuration::from_secs(30));
    let m = take(&s, "jobs").await.remove(0);

    // delay_seconds given: that, not the backoff.
    s.post(
        "/v1/queue/nack",
        json!({"queue": "jobs", "message_id": id, "receipt": m["receipt"], "delay_seconds": 0}),
    )
    .await
    .ok();
    assert_eq!(take(&s, "jobs").await.len(), 1, "delay_seconds 0: at once");
}
both!(backoff_times_nacks_and_expired_leases);

/// A failed push delivery waits out the queue's backoff, not the
/// dispatcher's own (which would be random, and at most an hour).
async fn backoff_times_failed_push_deliveries(b: Backend) {
    let s = TestServer::start_with(b, push::config()).await;
    let hook = push::receiver::Receiver::answering(500).await;
    s.post(
        "/v1/queue/create",
        json!({"name": "jobs", "retry_backoff": {"initial_seconds": 7200, "max_seconds": 7200}}),
    )
    .await
    .ok();
    push::subscribe(&s, "jobs", &hook.url("/hook"), json!({})).await;
    let id = s.publish("jobs", json!({"n": 1})).await;
    hook.wait_for(1).await;
    push::stats_until(&s, "jobs", |st| st["delayed"] == 1).await;
    let got = message(&s, "jobs", &id).await;
    assert_eq!(
        at(&got["visible_at"]),
        s.clock.now() + SignedDuration::from_secs(7200)
    );
}
both!(backoff_times_failed_push_deliveries);
