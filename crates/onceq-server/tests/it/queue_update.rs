//! `POST /v1/queue/update` (queue-api-2.md section 6): changes, what it
//! keeps, its refusals (each a 400/404 naming the field, nothing changed),
//! and the next hand-outs following the new settings.

use serde_json::{Value, json};

use crate::{
    both,
    harness::{Backend, TestServer},
};

async fn update_changes_named_settings_and_keeps_the_rest(b: Backend) {
    let s = TestServer::in_process(b).await;
    let created = s.post("/v1/queue/create", json!({"name": "orders"})).await;
    let created = created.ok().data().clone();
    s.post("/v1/queue/create", json!({"name": "graveyard"}))
        .await
        .ok();
    let r = s
        .post(
            "/v1/queue/update",
            json!({"name": "orders", "max_retries": 9, "visibility_timeout_default": 90,
                   "message_retention_days": 2, "enable_priority": false,
                   "dead_letter_queue": "graveyard", "type": "standard"}),
        )
        .await;
    let d = r.ok().data().clone();
    let mut expected = created.clone();
    expected["max_retries"] = json!(9);
    expected["visibility_timeout_default"] = json!(90);
    expected["message_retention_days"] = json!(2);
    expected["enable_priority"] = json!(false);
    expected["dead_letter_queue"] = json!("graveyard");
    assert_eq!(d, expected);
    assert_eq!(s.get("/v1/queue/get/orders").await.data(), &expected);
    // A field left out (or null) keeps its value.
    let again = s
        .post(
            "/v1/queue/update",
            json!({"name": "orders", "max_retries": 1, "max_in_flight": null}),
        )
        .await;
    expected["max_retries"] = json!(1);
    assert_eq!(again.ok().data(), &expected);
}
both!(update_changes_named_settings_and_keeps_the_rest);

async fn update_refusals_name_the_field_and_change_nothing(b: Backend) {
    let s = TestServer::in_process(b).await;
    let before = s.post("/v1/queue/create", json!({"name": "orders"})).await;
    let before = before.ok().data().clone();
    s.post("/v1/queue/create", json!({"name": "lines", "type": "fifo"}))
        .await
        .ok();
    let bad: [(Value, &str); 11] = [
        (json!({}), "name"),
        (json!({"name": "a b"}), "name"),
        (
            json!({"name": "orders", "type": "fifo", "max_retries": 2}),
            "type cannot change",
        ),
        (json!({"name": "orders", "type": "lifo"}), "type"),
        (
            json!({"name": "orders", "max_retries": 1001}),
            "max_retries",
        ),
        (
            json!({"name": "orders", "message_retention_days": 31}),
            "message_retention_days",
        ),
        (
            json!({"name": "orders", "visibility_timeout_default": -1}),
            "visibility_timeout_default",
        ),
        (
            json!({"name": "orders", "dead_letter_queue": "orders"}),
            "dead_letter_queue",
        ),
        (
            json!({"name": "orders", "dead_letter_queue": "lines"}),
            "FIFO",
        ),
        (
            json!({"name": "orders", "completed_retention_seconds": 2_592_001, "max_retries": 2}),
            "completed_retention_seconds",
        ),
        (
            json!({"name": "orders", "retry_backoff": {"initial_seconds": 1}}),
            "retry_backoff.max_seconds",
        ),
    ];
    for (body, field) in bad {
        let r = s.post("/v1/queue/update", body.clone()).await;
        let message = r.err(400, "INVALID_PARAMS");
        assert!(message.contains(field), "{body}: {message}");
        assert!(
            r.body["error"]["hint"].is_string(),
            "{body}: a hint: {}",
            r.body
        );
    }
    for (rest, value) in [
        ("completed_retention_seconds", json!(2_592_001)),
        ("completed_retention_seconds", json!(-1)),
        ("max_in_flight", json!(0)),
        ("max_in_flight", json!(1.5)),
        ("max_in_flight", json!(100_001)),
        ("rate_per_sec", json!(0)),
        ("rate_per_sec", json!(100_001)),
        ("rate_per_sec", json!("fast")),
    ] {
        let r = s
            .post("/v1/queue/update", json!({"name": "orders", rest: value}))
            .await;
        assert!(
            r.err(400, "INVALID_PARAMS").contains(rest),
            "{rest}: {value}"
        );
    }
    let missing = s
        .post(
            "/v1/queue/update",
            json!({"name": "orders", "dead_letter_queue": "nowhere"}),
        )
        .await;
    assert!(missing.err(404, "QUEUE_NOT_FOUND").contains("nowhere"));
    let unknown = s
        .post(
            "/v1/queue/update",
            json!({"name": "ghost", "max_retries": 1}),
        )
        .await;
    assert!(unknown.err(404, "QUEUE_NOT_FOUND").contains("ghost"));
    assert_eq!(s.get("/v1/queue/get/orders").await.data(), &before);
    s.get("/v1/queue/get/nowhere")
        .await
        .err(404, "QUEUE_NOT_FOUND");
    s.get("/v1/queue/get/ghost")
        .await
        .err(404, "QUEUE_NOT_FOUND");
}
both!(update_refusals_name_the_field_and_change_nothing);

async fn update_applies_to_the_next_hand_outs(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.publish("jobs", json!({"n": 1})).await;
    s.post(
        "/v1/queue/update",
        json!({"name": "jobs", "max_retries": 0, "visibility_timeout_default": 600}),
    )
    .await
    .ok();
    let got = s.post("/v1/queue/consume", json!({"queue": "jobs"})).await;
    let item = got.ok().data()["items"][0].clone();
    let leased: jiff::Timestamp = item["lease_expires_at"].as_str().unwrap().parse().unwrap();
    let created: jiff::Timestamp = item["created_at"].as_str().unwrap().parse().unwrap();
    assert!(leased.duration_since(created).as_secs() >= 600, "{item}");
    // max_retries 0: the first failure dead-letters.
    let n = s
        .post(
            "/v1/queue/nack",
            json!({"queue": "jobs", "message_id": item["message_id"], "receipt": item["receipt"]}),
        )
        .await;
    assert_eq!(n.ok().data()["dead_lettered"], true, "{}", n.body);
}
both!(update_applies_to_the_next_hand_outs);

async fn update_needs_an_admin_key_for_both_queues(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.post("/v1/queue/create", json!({"name": "exports-a"}))
        .await
        .ok();
    s.post("/v1/queue/create", json!({"name": "other"}))
        .await
        .ok();
    let reader = s.scoped_key("alpha", "read-only", "*").await;
    s.post_as(
        &reader,
        "/v1/queue/update",
        json!({"name": "exports-a", "max_retries": 1}),
    )
    .await
    .err(403, "FORBIDDEN");
    let admin = s.scoped_key("alpha", "admin", "exports-*").await;
    s.post_as(
        &admin,
        "/v1/queue/update",
        json!({"name": "exports-a", "dead_letter_queue": "other"}),
    )
    .await
    .err(403, "FORBIDDEN");
    s.post_as(
        &admin,
        "/v1/queue/update",
        json!({"name": "exports-a", "max_retries": 1}),
    )
    .await
    .ok();
}
both!(update_needs_an_admin_key_for_both_queues);

/// A body cut short is refused saying where it ends, not behind the `?`
/// the decoder writes for a place it cannot name (it used to answer
/// "?: EOF while parsing a value at line 1 column 17").
async fn truncated_body_says_where(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.post("/v1/queue/create", json!({"name": "orders"}))
        .await
        .ok();
    for (body, expected) in [
        (
            &br#"{"name":"orders","#[..],
            "malformed JSON body: EOF while parsing a value at line 1 column 17",
        ),
        (
            br#"{"name":"orders","max_retries":}"#,
            "max_retries: expected value at line 1 column 32",
        ),
    ] {
        let r = s.post_raw("/v1/queue/update", body.to_vec()).await;
        assert_eq!(r.err(400, "INVALID_PARAMS"), expected);
    }
}
both!(truncated_body_says_where);
