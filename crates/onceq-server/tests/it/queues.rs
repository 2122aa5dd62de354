//! create, list, get, delete, stats, purge, redrive over HTTP.

use reqwest::Method;
use serde_json::json;

use crate::{
    both,
    harness::{Backend, TestServer},
};

async fn create_get_list_delete(b: Backend) {
    let s = TestServer::in_process(b).await;
    let r = s.post("/v1/queue/create", json!({"name": "orders"})).await;
    r.ok();
    let d = r.data();
    assert_eq!(d["name"], "orders");
    assert_eq!(d["type"], "standard");
    assert_eq!(d["dead_letter_queue"], "orders-dlq");
    assert_eq!(d["max_retries"], 3);
    assert_eq!(d["message_retention_days"], 7);
    assert_eq!(d["visibility_timeout_default"], 30);
    assert_eq!(d["enable_priority"], true);
    // identical again: the same record
    let again = s
        .post(
            "/v1/queue/create",
            json!({"name": "orders", "max_retries": 3}),
        )
        .await;
    assert_eq!(again.data(), d);
    s.post(
        "/v1/queue/create",
        json!({"name": "orders", "max_retries": 5}),
    )
    .await
    .err(409, "QUEUE_ALREADY_EXISTS");
    // explicit DLQ must exist
    s.post(
        "/v1/queue/create",
        json!({"name": "pay", "dead_letter_queue": "graveyard"}),
    )
    .await
    .err(404, "QUEUE_NOT_FOUND");
    s.post("/v1/queue/create", json!({"name": "graveyard"}))
        .await
        .ok();
    let r = s
        .post("/v1/queue/create", json!({"name": "pay", "dead_letter_queue": "graveyard", "visibility_timeout_default": 120, "max_retries": 0}))
        .await;
    assert_eq!(r.data()["dead_letter_queue"], "graveyard");
    assert_eq!(r.data()["visibility_timeout_default"], 120);

    let bad = [
        (json!({}), "name"),
        (json!({"name": "a b"}), "name"),
        (json!({"name": "x", "type": "lifo"}), "type"),
        (json!({"name": "x", "max_retries": -1}), "max_retries"),
        (
            json!({"name": "x", "message_retention_days": 31}),
            "message_retention_days",
        ),
        (
            json!({"name": "x", "message_retention_days": 0}),
            "message_retention_days",
        ),
        (
            json!({"name": "x", "visibility_timeout_default": 43_201}),
            "visibility_timeout_default",
        ),
        (
            json!({"name": "x", "enable_priority": "yes"}),
            "enable_priority",
        ),
        (
            json!({"name": "x", "dead_letter_queue": "x"}),
            "dead_letter_queue",
        ),
    ];
    for (body, field) in bad {
        let msg = s
            .post("/v1/queue/create", body.clone())
            .await
            .err(400, "INVALID_PARAMS");
        assert!(msg.contains(field), "{body}: {msg}");
    }
    s.get("/v1/queue/get/x").await.err(404, "QUEUE_NOT_FOUND");

    let names: Vec<String> = s.get("/v1/queue/list").await.data()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        names,
        ["graveyard", "graveyard-dlq", "orders", "orders-dlq", "pay"]
    );

    // three ways to delete
    s.publish("orders", json!(1)).await;
    let r = s
        .send(
            Method::DELETE,
            "/v1/queue/delete/orders",
            None,
            Some(&s.key),
        )
        .await;
    assert_eq!(
        r.data(),
        &json!({"queue": "orders", "deleted": true, "messages_deleted": 1})
    );
    s.get("/v1/queue/stats/orders")
        .await
        .err(404, "QUEUE_NOT_FOUND");
    s.post("/v1/queue/delete/pay", json!({})).await.ok();
    s.post("/v1/queue/delete", json!({"queue": "graveyard-dlq"}))
        .await
        .ok();
    s.post("/v1/queue/delete", json!({"queue": "graveyard-dlq"}))
        .await
        .err(404, "QUEUE_NOT_FOUND");
    // graveyard lost its DLQ
    assert!(s.get("/v1/queue/get/graveyard").await.data()["dead_letter_queue"].is_null());
    s.get("/v1/queue/get/bad%20name")
        .await
        .err(400, "INVALID_PARAMS");
}
both!(create_get_list_delete);

async fn stats_counts_every_state(b: Backend) {
    let s = TestServer::in_process(b).await;
    for n in 0..3 {
        s.publish("q", json!(n)).await;
    }
    s.post(
        "/v1/queue/publish",
        json!({"queue": "q", "payload": "later", "delay_seconds": 100}),
    )
    .await
    .ok();
    s.post("/v1/queue/consume", json!({"queue": "q"}))
        .await
        .ok();
    s.clock.advance(jiff::SignedDuration::from_secs(42));
    let st = s.stats("q").await;
    assert_eq!(
        st,
        json!({"queue": "q", "message_count": 4, "available": 2, "delayed": 1, "in_flight": 1,
               "dead_lettered": 0, "dead_letter_queue": "q-dlq", "oldest_message_age_seconds": 42,
               "paused": false})
    );
    let empty = s.post("/v1/queue/create", json!({"name": "e"})).await;
    empty.ok();
    assert_eq!(s.stats("e").await["oldest_message_age_seconds"], 0);
}
both!(stats_counts_every_state);

async fn purge_removes_every_held_message(b: Backend) {
    let s = TestServer::in_process(b).await;
    for n in 0..5 {
        s.publish("q", json!(n)).await;
    }
    s.post(
        "/v1/queue/consume",
        json!({"queue": "q", "max_messages": 2}),
    )
    .await
    .ok();
    let r = s.post("/v1/queue/purge/q", json!({})).await;
    assert_eq!(r.data(), &json!({"purged": 5}));
    assert_eq!(s.stats("q").await["message_count"], 0);
    s.post("/v1/queue/purge/none", json!({}))
        .await
        .err(404, "QUEUE_NOT_FOUND");
}
both!(purge_removes_every_held_message);

async fn redrive_respects_max_and_needs_a_dlq(b: Backend) {
    let s = TestServer::in_process(b).await;
    for n in 0..3 {
        s.publish("q", json!(n)).await;
    }
    let items = s
        .post(
            "/v1/queue/consume",
            json!({"queue": "q", "max_messages": 3}),
        )
        .await;
    for m in items.data()["items"].as_array().unwrap() {
        s.post(
            "/v1/queue/nack",
            json!({"queue": "q", "message_id": m["message_id"], "requeue": false}),
        )
        .await
        .ok();
    }
    assert_eq!(s.stats("q").await["dead_lettered"], 3);
    let r = s
        .post("/v1/queue/dlq/redrive/q", json!({"max_messages": 2}))
        .await;
    assert_eq!(r.data()["redriven"], 2);
    let st = s.stats("q").await;
    assert_eq!(
        (st["available"].as_i64(), st["dead_lettered"].as_i64()),
        (Some(2), Some(1))
    );
    s.post("/v1/queue/dlq/redrive/q", json!({"max_messages": 0}))
        .await
        .err(400, "INVALID_PARAMS");
    s.post("/v1/queue/dlq/redrive/q-dlq", json!({}))
        .await
        .err(400, "INVALID_PARAMS");
    s.post("/v1/queue/dlq/redrive/none", json!({}))
        .await
        .err(404, "QUEUE_NOT_FOUND");
}
both!(redrive_respects_max_and_needs_a_dlq);
