//! `publish_batch` with an `Idempotency-Key` header: items without a key of
//! their own take `<header key>:<index>`, so a retried batch stores nothing
//! twice and answers the same items, each with its replay flag.

use reqwest::Method;
use serde_json::json;

use super::call;
use crate::{
    both,
    harness::{Backend, TestServer},
};

async fn a_retried_batch_stores_nothing_twice(b: Backend) {
    let s = TestServer::in_process(b).await;
    let body = json!({"queue": "orders", "messages": [
        {"payload": {"n": 0}},
        {"payload": {"n": 1}, "idempotency_key": "own"},
        {"payload": {"n": 2}},
    ]});
    let first = call(
        &s,
        Method::POST,
        "/v1/queue/publish_batch",
        Some(body.clone()),
        "B",
    )
    .await;
    first.ok();
    let again = call(&s, Method::POST, "/v1/queue/publish_batch", Some(body), "B").await;
    again.ok();
    assert_eq!(s.stats("orders").await["message_count"], 3, "stored once");
    let ids = |r: &crate::harness::Res| -> Vec<String> {
        r.data()["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["message_id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(ids(&first), ids(&again));
    for item in again.data()["items"].as_array().unwrap() {
        assert_eq!(item["idempotent_replay"], true, "{item}");
    }
    assert_eq!(again.body["metadata"]["idempotent_replay"], true);
    // Item 2's key is the header's stem and its index.
    let single = s
        .post(
            "/v1/queue/publish",
            json!({"queue": "orders", "payload": {"n": 2}, "idempotency_key": "B:2"}),
        )
        .await;
    single.ok();
    assert_eq!(
        single.data()["message_id"].as_str(),
        Some(ids(&first)[2].as_str())
    );
    // The item with a key of its own kept it.
    let own = s
        .post(
            "/v1/queue/publish",
            json!({"queue": "orders", "payload": {"n": 1}, "idempotency_key": "own"}),
        )
        .await;
    assert_eq!(
        own.data()["message_id"].as_str(),
        Some(ids(&first)[1].as_str())
    );
    // The same header with other payloads reuses the items' keys.
    let other = json!({"queue": "orders", "messages": [{"payload": {"n": 9}}]});
    call(
        &s,
        Method::POST,
        "/v1/queue/publish_batch",
        Some(other),
        "B",
    )
    .await
    .err(422, "IDEMPOTENCY_KEY_REUSED");
    assert_eq!(s.stats("orders").await["message_count"], 3);
}
both!(a_retried_batch_stores_nothing_twice);

async fn a_header_too_long_for_its_items_is_refused(b: Backend) {
    let s = TestServer::in_process(b).await;
    let body = json!({"queue": "orders", "messages": [{"payload": 1}]});
    let r = call(
        &s,
        Method::POST,
        "/v1/queue/publish_batch",
        Some(body),
        &"k".repeat(254),
    )
    .await;
    let message = r.err(400, "INVALID_PARAMS");
    assert!(message.contains("Idempotency-Key"), "{message}");
    s.get("/v1/queue/stats/orders")
        .await
        .err(404, "QUEUE_NOT_FOUND");
}
both!(a_header_too_long_for_its_items_is_refused);
