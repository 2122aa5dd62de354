//! Bearer keys and tenant isolation.

use serde_json::json;

use crate::{
    both,
    harness::{Backend, TestServer},
};

async fn missing_or_unknown_key_is_401(b: Backend) {
    let s = TestServer::in_process(b).await;
    let body = json!({"queue": "q", "payload": 1});
    let r = s
        .send(
            reqwest::Method::POST,
            "/v1/queue/publish",
            Some(body.clone()),
            None,
        )
        .await;
    r.err(401, "UNAUTHORIZED");
    let r = s
        .send(
            reqwest::Method::POST,
            "/v1/queue/publish",
            Some(body),
            Some("oq_nope_nope"),
        )
        .await;
    r.err(401, "UNAUTHORIZED");
    let r = s
        .http
        .get(s.url("/v1/queue/list"))
        .header("authorization", "Basic abc")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    // nothing was created by the refused publish
    s.get("/v1/queue/list").await.ok();
    assert_eq!(s.get("/v1/queue/list").await.data()["items"], json!([]));
}
both!(missing_or_unknown_key_is_401);

async fn revoked_key_stops_working_at_once(b: Backend) {
    let s = TestServer::in_process(b).await;
    let now = s.clock.now();
    let (key, rec) = onceq_server::auth::create_key(s.state.store().as_ref(), "alpha", None, now)
        .await
        .unwrap();
    let list = || {
        s.send(
            reqwest::Method::GET,
            "/v1/queue/list",
            None,
            Some(&key.secret),
        )
    };
    list().await.ok();
    assert!(s.state.store().key_revoke(&rec.key_id, now).await.unwrap());
    list().await.err(401, "UNAUTHORIZED");
}
both!(revoked_key_stops_working_at_once);

async fn projects_never_see_each_other(b: Backend) {
    let s = TestServer::in_process(b).await;
    let id = s.publish("orders", json!({"n": 1})).await;
    let beta = |m, p: &'static str, body| s.send(m, p, body, Some(&s.other_key));
    use reqwest::Method;

    // beta has no queue "orders" until it publishes its own
    beta(Method::GET, "/v1/queue/stats/orders", None)
        .await
        .err(404, "QUEUE_NOT_FOUND");
    beta(Method::GET, "/v1/queue/get/orders", None)
        .await
        .err(404, "QUEUE_NOT_FOUND");
    let r = beta(
        Method::POST,
        "/v1/queue/consume",
        Some(json!({"queue": "orders"})),
    )
    .await;
    r.err(404, "QUEUE_NOT_FOUND");
    beta(
        Method::POST,
        "/v1/queue/publish",
        Some(json!({"queue": "orders", "payload": {"n": 2}})),
    )
    .await
    .ok();
    let r = beta(
        Method::POST,
        "/v1/queue/consume",
        Some(json!({"queue": "orders", "max_messages": 10})),
    )
    .await;
    let items = r.data()["items"].as_array().unwrap().clone();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["payload"], json!({"n": 2}));
    // beta cannot ack, nack or purge alpha's message
    let r = beta(
        Method::POST,
        "/v1/queue/ack",
        Some(json!({"queue": "orders", "message_id": id})),
    )
    .await;
    assert_eq!(r.data()["acked"], false);
    beta(Method::POST, "/v1/queue/purge/orders", None)
        .await
        .ok();
    let stats = s.stats("orders").await;
    assert_eq!(stats["message_count"], 1);
    assert_eq!(stats["available"], 1);
    let names: Vec<String> = beta(Method::GET, "/v1/queue/list", None).await.data()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["orders", "orders-dlq"]);
}
both!(projects_never_see_each_other);
