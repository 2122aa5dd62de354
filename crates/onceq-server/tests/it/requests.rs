//! Requests real clients send (queue-api-2.md §2): `deduplication_id`, a
//! camelCase near-miss of a field refused with "did you mean" (any other
//! unknown field ignored), a secret refused for the rule it breaks, and
//! push_subscribe's queue settings refused rather than ignored. Every
//! refusal stores nothing.

use serde_json::{Value, json};

use crate::{
    both,
    harness::{Backend, TestServer},
};

#[track_caller]
fn assert_near_miss(r: &crate::harness::Res, key: &str, field: &str) {
    let message = r.err(400, "INVALID_PARAMS");
    assert_eq!(
        message,
        format!("unknown field `{key}`; did you mean `{field}`?")
    );
    assert!(r.body["error"]["hint"].as_str().unwrap().contains(field));
}

async fn camel_case_near_misses_are_refused(b: Backend) {
    let s = TestServer::in_process(b).await;
    let r = s
        .post(
            "/v1/queue/publish",
            json!({"queue": "orders", "payload": 1, "idempotencyKey": "k"}),
        )
        .await;
    assert_near_miss(&r, "idempotencyKey", "idempotency_key");
    let r = s
        .post(
            "/v1/queue/publish",
            json!({"queue": "orders", "payload": 1, "delaySeconds": 5}),
        )
        .await;
    assert_near_miss(&r, "delaySeconds", "delay_seconds");
    let r = s
        .post(
            "/v1/queue/publish_batch",
            json!({"queue": "orders", "messages": [{"payload": 1}, {"payload": 2, "messageGroupId": "g"}]}),
        )
        .await;
    assert_near_miss(&r, "messageGroupId", "message_group_id");
    s.get("/v1/queue/stats/orders")
        .await
        .err(404, "QUEUE_NOT_FOUND");
    for (key, field) in [
        ("maxMessages", "max_messages"),
        ("visibilityTimeout", "visibility_timeout"),
        ("waitSeconds", "wait_seconds"),
    ] {
        let mut body = json!({"queue": "orders"});
        body[key] = json!(1);
        assert_near_miss(&s.post("/v1/queue/consume", body).await, key, field);
    }
    let r = s
        .post(
            "/v1/queue/create",
            json!({"name": "orders", "maxRetries": 1}),
        )
        .await;
    assert_near_miss(&r, "maxRetries", "max_retries");
    s.post("/v1/queue/create", json!({"name": "jobs"}))
        .await
        .ok();
    let r = s
        .post(
            "/v1/queue/push_subscribe/jobs",
            json!({"url": "https://hooks.example.com", "maxInFlight": 2}),
        )
        .await;
    assert_near_miss(&r, "maxInFlight", "max_in_flight");
}
both!(camel_case_near_misses_are_refused);

async fn other_unknown_fields_stay_ignored(b: Backend) {
    let s = TestServer::in_process(b).await;
    let r = s
        .post(
            "/v1/queue/publish",
            json!({"queue": "orders", "payload": 1, "traceId": "x", "Queue": "y", "extra": {"idempotencyKey": 1}}),
        )
        .await;
    r.ok();
    let r = s
        .post(
            "/v1/queue/publish",
            json!({"queue": "orders", "payload": {"idempotencyKey": "inside the payload"}}),
        )
        .await;
    r.ok();
}
both!(other_unknown_fields_stay_ignored);

async fn deduplication_id_is_idempotency_key(b: Backend) {
    let s = TestServer::in_process(b).await;
    let publish = |body: Value| s.post("/v1/queue/publish", body);
    let first = publish(json!({"queue": "orders", "payload": 1, "deduplication_id": "d1"})).await;
    first.ok();
    let again = publish(json!({"queue": "orders", "payload": 1, "deduplication_id": "d1"})).await;
    again.ok();
    assert_eq!(again.data()["message_id"], first.data()["message_id"]);
    assert_eq!(again.body["metadata"]["idempotent_replay"], true);
    let by_other_name =
        publish(json!({"queue": "orders", "payload": 1, "idempotency_key": "d1"})).await;
    assert_eq!(
        by_other_name.data()["message_id"],
        first.data()["message_id"]
    );
    publish(
        json!({"queue": "orders", "payload": 1, "idempotency_key": "d1", "deduplication_id": "d1"}),
    )
    .await
    .ok();
    let r = publish(
        json!({"queue": "orders", "payload": 2, "idempotency_key": "a", "deduplication_id": "b"}),
    )
    .await;
    let message = r.err(400, "INVALID_PARAMS");
    assert!(
        message.contains("idempotency_key") && message.contains("deduplication_id"),
        "{message}"
    );
    let r = s
        .post(
            "/v1/queue/publish_batch",
            json!({"queue": "orders", "messages": [
                {"payload": 3, "deduplication_id": "d3"},
                {"payload": 4, "idempotency_key": "x", "deduplication_id": "y"},
            ]}),
        )
        .await;
    let message = r.err(400, "INVALID_PARAMS");
    assert!(
        message.contains("messages[1].deduplication_id"),
        "{message}"
    );
    let r = s
        .post(
            "/v1/queue/publish_batch",
            json!({"queue": "orders", "messages": [{"payload": 1, "deduplication_id": "d1"}]}),
        )
        .await;
    r.ok();
    assert_eq!(
        r.data()["items"][0]["message_id"],
        first.data()["message_id"]
    );
    assert_eq!(s.stats("orders").await["message_count"], 1);
}
both!(deduplication_id_is_idempotency_key);

async fn a_secret_is_refused_for_the_rule_it_breaks(b: Backend) {
    let s = TestServer::in_process_with(b, crate::push::config()).await;
    s.post("/v1/queue/create", json!({"name": "jobs"}))
        .await
        .ok();
    let subscribe = |secret: &str| {
        s.post(
            "/v1/queue/push_subscribe/jobs",
            json!({"url": "https://hooks.example.com", "secret": secret}),
        )
    };
    // 22 bytes, of the right length, with a space.
    let message = subscribe("test-secret 0123456789")
        .await
        .err(400, "INVALID_PARAMS");
    assert!(message.contains("a space at byte 11"), "{message}");
    assert!(!message.contains("long"), "{message}");
    let message = subscribe("short").await.err(400, "INVALID_PARAMS");
    assert!(
        message.contains("16 to 255 bytes long (got 5)"),
        "{message}"
    );
    let message = subscribe("test-secret-0123456789-é")
        .await
        .err(400, "INVALID_PARAMS");
    assert!(message.contains("non-ASCII"), "{message}");
    let r = s.get("/v1/queue/push_subscriptions/jobs").await;
    assert_eq!(r.data()["items"], json!([]));
}
both!(a_secret_is_refused_for_the_rule_it_breaks);

async fn push_subscribe_refuses_queue_settings(b: Backend) {
    let s = TestServer::in_process_with(b, crate::push::config()).await;
    s.post("/v1/queue/create", json!({"name": "jobs"}))
        .await
        .ok();
    for (field, value, setting) in [
        ("max_retries", json!(5), "max_retries"),
        (
            "visibility_timeout",
            json!(60),
            "visibility_timeout_default",
        ),
        ("dead_letter_queue", json!("graveyard"), "dead_letter_queue"),
    ] {
        let mut body = json!({"url": "https://hooks.example.com"});
        body[field] = value;
        let r = s.post("/v1/queue/push_subscribe/jobs", body).await;
        let message = r.err(400, "INVALID_PARAMS");
        assert!(
            message.starts_with(field) && message.contains(setting),
            "{message}"
        );
        assert!(
            r.body["error"]["hint"]
                .as_str()
                .unwrap()
                .contains("/v1/queue/update")
        );
    }
    let r = s.get("/v1/queue/push_subscriptions/jobs").await;
    assert_eq!(r.data()["items"], json!([]), "nothing stored");
}
both!(push_subscribe_refuses_queue_settings);

/// A body is one JSON object. The decoder would take an array for one, its
/// items as the fields in order (schemathesis found `[]` accepted as a
/// redrive's optional body); refused, and nothing done.
async fn a_body_that_is_not_an_object_is_refused(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.post("/v1/queue/create", json!({"name": "orders"}))
        .await
        .ok();
    for (path, body) in [
        ("/v1/queue/dlq/redrive/orders", "[]"),
        ("/v1/queue/publish", r#"["orders", {"n": 1}]"#),
        ("/v1/queue/publish", r#""orders""#),
        ("/v1/queue/create", "  [\"other\"]"),
    ] {
        let r = s.post_raw(path, body.as_bytes().to_vec()).await;
        assert_eq!(
            r.err(400, "INVALID_PARAMS"),
            "body must be a JSON object",
            "{path} {body}"
        );
        let hint = r.body["error"]["hint"].as_str().unwrap_or_default();
        assert!(hint.contains("one object"), "{path} {body}: {hint}");
    }
    assert_eq!(s.stats("orders").await["message_count"], 0);
    s.get("/v1/queue/get/other")
        .await
        .err(404, "QUEUE_NOT_FOUND");
}
both!(a_body_that_is_not_an_object_is_refused);
