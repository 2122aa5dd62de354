//! Each mutating route with the call ledger: replay, 422 and 409 (see the
//! parent module), and that a replay does nothing more.

use reqwest::Method;
use serde_json::{Value, json};

use super::{call, in_flight, replays};
use crate::{
    both,
    harness::{Backend, TestServer},
};

async fn consume_one(s: &TestServer, queue: &str) -> (String, String) {
    let r = s.post("/v1/queue/consume", json!({"queue": queue})).await;
    r.ok();
    let item = &r.data()["items"][0];
    (
        item["message_id"].as_str().unwrap().to_owned(),
        item["receipt"].as_str().unwrap().to_owned(),
    )
}

async fn create(b: Backend) {
    let s = TestServer::in_process(b).await;
    let path = "/v1/queue/create";
    let first = replays(
        &s,
        Method::POST,
        path,
        Some(json!({"name": "orders"})),
        (path, Some(json!({"name": "orders", "max_retries": 5}))),
    )
    .await;
    assert_eq!(first["name"], "orders");
    // Deleted since: the replay answers, and creates nothing.
    s.send(
        Method::DELETE,
        "/v1/queue/delete/orders",
        None,
        Some(&s.key),
    )
    .await
    .ok();
    call(&s, Method::POST, path, Some(json!({"name": "orders"})), "K")
        .await
        .ok();
    s.get("/v1/queue/get/orders")
        .await
        .err(404, "QUEUE_NOT_FOUND");
    in_flight(
        &s,
        "queue.create",
        Method::POST,
        path,
        Some(json!({"name": "other"})),
    )
    .await;
}
both!(create);

async fn update(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.post("/v1/queue/create", json!({"name": "orders"}))
        .await
        .ok();
    let path = "/v1/queue/update";
    let first = replays(
        &s,
        Method::POST,
        path,
        Some(json!({"name": "orders", "max_retries": 7})),
        (path, Some(json!({"name": "orders", "max_retries": 8}))),
    )
    .await;
    assert_eq!(first["max_retries"], 7);
    s.post(path, json!({"name": "orders", "max_retries": 2}))
        .await
        .ok();
    call(
        &s,
        Method::POST,
        path,
        Some(json!({"name": "orders", "max_retries": 7})),
        "K",
    )
    .await
    .ok();
    let now = s.get("/v1/queue/get/orders").await;
    assert_eq!(now.data()["max_retries"], 2, "the replay changed nothing");
    in_flight(
        &s,
        "queue.update",
        Method::POST,
        path,
        Some(json!({"name": "orders", "max_retries": 4})),
    )
    .await;
}
both!(update);

async fn delete(b: Backend) {
    let s = TestServer::in_process(b).await;
    for name in ["orders", "other", "third"] {
        s.post("/v1/queue/create", json!({"name": name})).await.ok();
    }
    replays(
        &s,
        Method::DELETE,
        "/v1/queue/delete/orders",
        None,
        ("/v1/queue/delete/other", None),
    )
    .await;
    s.post("/v1/queue/create", json!({"name": "orders"}))
        .await
        .ok();
    call(&s, Method::DELETE, "/v1/queue/delete/orders", None, "K")
        .await
        .ok();
    s.get("/v1/queue/get/orders").await.ok();
    // The body form is the same capability: its own fingerprint.
    let body = Some(json!({"queue": "third"}));
    call(&s, Method::POST, "/v1/queue/delete", body, "K")
        .await
        .err(422, "IDEMPOTENCY_KEY_REUSED");
    in_flight(
        &s,
        "queue.delete",
        Method::POST,
        "/v1/queue/delete",
        Some(json!({"queue": "third"})),
    )
    .await;
}
both!(delete);

async fn purge(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.post("/v1/queue/create", json!({"name": "other"}))
        .await
        .ok();
    s.publish("orders", json!(1)).await;
    s.publish("orders", json!(2)).await;
    let first = replays(
        &s,
        Method::POST,
        "/v1/queue/purge/orders",
        None,
        ("/v1/queue/purge/other", None),
    )
    .await;
    assert_eq!(first["purged"], 2);
    s.publish("orders", json!(3)).await;
    let again = call(&s, Method::POST, "/v1/queue/purge/orders", None, "K").await;
    assert_eq!(again.data()["purged"], 2);
    assert_eq!(
        s.stats("orders").await["message_count"],
        1,
        "the replay purged nothing"
    );
    in_flight(
        &s,
        "queue.purge",
        Method::POST,
        "/v1/queue/purge/orders",
        None,
    )
    .await;
    assert_eq!(s.stats("orders").await["message_count"], 0);
}
both!(purge);

async fn ack(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.publish("orders", json!(1)).await;
    s.publish("orders", json!(2)).await;
    let (id, receipt) = consume_one(&s, "orders").await;
    let (other, _) = consume_one(&s, "orders").await;
    let first = replays(
        &s,
        Method::POST,
        "/v1/queue/ack",
        Some(json!({"queue": "orders", "message_id": id, "receipt": receipt})),
        (
            "/v1/queue/ack",
            Some(json!({"queue": "orders", "message_id": other})),
        ),
    )
    .await;
    assert_eq!(
        first["acked"], true,
        "a retried ack says what the first said"
    );
    s.publish("orders", json!(3)).await;
    let (id, _) = consume_one(&s, "orders").await;
    let r = in_flight(
        &s,
        "queue.ack",
        Method::POST,
        "/v1/queue/ack",
        Some(json!({"queue": "orders", "message_id": id})),
    )
    .await;
    assert_eq!(r.data()["acked"], true);
}
both!(ack);

async fn nack(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.publish("orders", json!(1)).await;
    let (id, _) = consume_one(&s, "orders").await;
    let body = json!({"queue": "orders", "message_id": id});
    let first = replays(
        &s,
        Method::POST,
        "/v1/queue/nack",
        Some(body.clone()),
        (
            "/v1/queue/nack",
            Some(json!({"queue": "orders", "message_id": id, "requeue": false})),
        ),
    )
    .await;
    assert_eq!(first["requeued"], true);
    // Handed out again; the replay does not end the new lease.
    consume_one(&s, "orders").await;
    call(&s, Method::POST, "/v1/queue/nack", Some(body), "K")
        .await
        .ok();
    let stats = s.stats("orders").await;
    assert_eq!(
        (stats["in_flight"].clone(), stats["dead_lettered"].clone()),
        (json!(1), json!(0))
    );
    let r = in_flight(
        &s,
        "queue.nack",
        Method::POST,
        "/v1/queue/nack",
        Some(json!({"queue": "orders", "message_id": id, "delay_seconds": 5})),
    )
    .await;
    assert_eq!(r.data()["nacked"], true);
}
both!(nack);

async fn extend(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.publish("orders", json!(1)).await;
    let (id, receipt) = consume_one(&s, "orders").await;
    let body = |t: i64| json!({"queue": "orders", "message_id": id, "receipt": receipt, "visibility_timeout": t});
    let first = replays(
        &s,
        Method::POST,
        "/v1/queue/extend",
        Some(body(300)),
        ("/v1/queue/extend", Some(body(600))),
    )
    .await;
    assert_eq!(first["extended"], true);
    let r = in_flight(
        &s,
        "queue.extend",
        Method::POST,
        "/v1/queue/extend",
        Some(body(900)),
    )
    .await;
    assert_eq!(r.data()["extended"], true);
}
both!(extend);

/// Publishes a message to `orders` and dead-letters it.
async fn dead_letter(s: &TestServer) {
    s.publish("orders", json!(1)).await;
    let (id, _) = consume_one(s, "orders").await;
    s.post(
        "/v1/queue/nack",
        json!({"queue": "orders", "message_id": id, "requeue": false}),
    )
    .await
    .ok();
}

async fn redrive(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.post("/v1/queue/create", json!({"name": "other"}))
        .await
        .ok();
    dead_letter(&s).await;
    let path = "/v1/queue/dlq/redrive/orders";
    let first = replays(
        &s,
        Method::POST,
        path,
        Some(json!({})),
        ("/v1/queue/dlq/redrive/other", Some(json!({}))),
    )
    .await;
    assert_eq!(first["redriven"], 1);
    consume_one(&s, "orders").await;
    dead_letter(&s).await;
    call(&s, Method::POST, path, Some(json!({})), "K")
        .await
        .ok();
    assert_eq!(
        s.stats("orders").await["dead_lettered"],
        1,
        "the replay moved nothing"
    );
    let r = in_flight(
        &s,
        "queue.dlq.redrive",
        Method::POST,
        path,
        Some(json!({"max_messages": 5})),
    )
    .await;
    assert_eq!(r.data()["redriven"], 1);
}
both!(redrive);

async fn listed(s: &TestServer) -> Vec<Value> {
    let r = s.get("/v1/queue/push_subscriptions/jobs").await;
    r.ok();
    r.data()["items"].as_array().unwrap().clone()
}

async fn push_subscribe(b: Backend) {
    let s = TestServer::in_process_with(b, crate::push::config()).await;
    s.post("/v1/queue/create", json!({"name": "jobs"}))
        .await
        .ok();
    let path = "/v1/queue/push_subscribe/jobs";
    let body = json!({"url": "https://hooks.example.com/a", "secret": crate::push::SECRET});
    let first = replays(
        &s,
        Method::POST,
        path,
        Some(body.clone()),
        (path, Some(json!({"url": "https://hooks.example.com/b"}))),
    )
    .await;
    let subs = listed(&s).await;
    assert_eq!(
        subs.len(),
        1,
        "a retried push_subscribe makes one subscription: {subs:?}"
    );
    assert_eq!(subs[0]["subscription_id"], first["subscription_id"]);
    in_flight(
        &s,
        "queue.push_subscribe",
        Method::POST,
        path,
        Some(json!({"url": "https://hooks.example.com/c"})),
    )
    .await;
    assert_eq!(listed(&s).await.len(), 2);
}
both!(push_subscribe);

async fn push_unsubscribe(b: Backend) {
    let s = TestServer::in_process_with(b, crate::push::config()).await;
    s.post("/v1/queue/create", json!({"name": "jobs"}))
        .await
        .ok();
    let mut ids = Vec::new();
    for url in ["https://hooks.example.com/a", "https://hooks.example.com/b"] {
        let sub = crate::push::subscribe(&s, "jobs", url, json!({})).await;
        ids.push(sub["subscription_id"].as_str().unwrap().to_owned());
    }
    let path = |id: &str| format!("/v1/queue/push_unsubscribe/jobs/{id}");
    replays(
        &s,
        Method::DELETE,
        &path(&ids[0]),
        None,
        (&path(&ids[1]), None),
    )
    .await;
    assert_eq!(listed(&s).await.len(), 1);
    in_flight(
        &s,
        "queue.push_unsubscribe",
        Method::POST,
        &path(&ids[1]),
        None,
    )
    .await;
    assert_eq!(listed(&s).await.len(), 0);
}
both!(push_unsubscribe);
