//! The call ledger on the calls that came with the message lifecycle, queue
//! pause, cron and webhooks: each opted in by its capability
//! (`idempotency::IDEMPOTENT`), each replayed without doing anything more,
//! refused with 422 for another body, and 409 while the first still runs.

use reqwest::Method;
use serde_json::json;

use super::{call, in_flight, replays};
use crate::{
    both,
    harness::{Backend, TestServer},
};

async fn count(s: &TestServer, path: &str) -> usize {
    let r = s.get(path).await;
    r.ok();
    r.data()["items"].as_array().unwrap().len()
}

async fn cancel(b: Backend) {
    let s = TestServer::in_process(b).await;
    let first_id = s.publish("orders", json!(1)).await;
    let second_id = s.publish("orders", json!(2)).await;
    let body = |id: &str| json!({"queue": "orders", "message_id": id});
    let path = "/v1/queue/cancel";
    let first = replays(
        &s,
        Method::POST,
        path,
        Some(body(&first_id)),
        (path, Some(body(&second_id))),
    )
    .await;
    assert_eq!(
        first["cancelled"], true,
        "a retried cancel says what the first said"
    );
    assert_eq!(
        s.stats("orders").await["message_count"],
        1,
        "the refused reuse cancelled nothing"
    );
    let r = in_flight(
        &s,
        "queue.cancel",
        Method::POST,
        path,
        Some(body(&second_id)),
    )
    .await;
    assert_eq!(r.data()["cancelled"], true);
    assert_eq!(s.stats("orders").await["message_count"], 0);
}
both!(cancel);

async fn pause_and_resume(b: Backend) {
    let s = TestServer::in_process(b).await;
    for name in ["orders", "other"] {
        s.post("/v1/queue/create", json!({"name": name})).await.ok();
    }
    let first = replays(
        &s,
        Method::POST,
        "/v1/queue/pause/orders",
        None,
        ("/v1/queue/pause/other", None),
    )
    .await;
    assert_eq!(first["paused"], true);
    s.post("/v1/queue/resume/orders", json!({})).await.ok();
    call(&s, Method::POST, "/v1/queue/pause/orders", None, "K")
        .await
        .ok();
    assert_eq!(
        s.get("/v1/queue/get/orders").await.data()["paused"],
        false,
        "the replay paused nothing again"
    );
    let r = in_flight(
        &s,
        "queue.resume",
        Method::POST,
        "/v1/queue/resume/other",
        None,
    )
    .await;
    assert_eq!(r.data()["paused"], false);
}
both!(pause_and_resume);

async fn cron_create_and_delete(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.post("/v1/queue/create", json!({"name": "reports"}))
        .await
        .ok();
    let path = "/v1/cron/create";
    let job = |expr: &str| json!({"cron_expr": expr, "queue": "reports"});
    let first = replays(
        &s,
        Method::POST,
        path,
        Some(job("@daily")),
        (path, Some(job("@hourly"))),
    )
    .await;
    assert_eq!(count(&s, "/v1/cron/list").await, 1, "one schedule: {first}");
    let r = in_flight(&s, "cron.create", Method::POST, path, Some(job("@weekly"))).await;
    assert_eq!(count(&s, "/v1/cron/list").await, 2);
    let (a, b) = (
        first["job_id"].as_str().unwrap().to_owned(),
        r.data()["job_id"].as_str().unwrap().to_owned(),
    );
    let del = |id: &str| format!("/v1/cron/delete/{id}");
    replays(&s, Method::DELETE, &del(&a), None, (&del(&b), None)).await;
    assert_eq!(
        count(&s, "/v1/cron/list").await,
        1,
        "the reuse deleted nothing"
    );
    let paused = in_flight(
        &s,
        "cron.pause",
        Method::POST,
        &format!("/v1/cron/pause/{b}"),
        None,
    )
    .await;
    assert_eq!(paused.data()["paused"], true);
}
both!(cron_create_and_delete);

async fn webhook_register_and_delete(b: Backend) {
    let s = TestServer::in_process_with(b, crate::push::config()).await;
    let path = "/v1/account/webhooks/register";
    let hook = |url: &str| json!({"url": url, "events": ["*"]});
    let first = replays(
        &s,
        Method::POST,
        path,
        Some(hook("https://hooks.example/a")),
        (path, Some(hook("https://hooks.example/b"))),
    )
    .await;
    let list = "/v1/account/webhooks/list";
    assert_eq!(
        count(&s, list).await,
        1,
        "a retried register makes one webhook"
    );
    let r = in_flight(
        &s,
        "account.webhooks.register",
        Method::POST,
        path,
        Some(hook("https://hooks.example/c")),
    )
    .await;
    assert_eq!(count(&s, list).await, 2);
    let (a, b) = (
        first["id"].as_str().unwrap().to_owned(),
        r.data()["id"].as_str().unwrap().to_owned(),
    );
    let del = |id: &str| format!("/v1/account/webhooks/delete/{id}");
    replays(&s, Method::DELETE, &del(&a), None, (&del(&b), None)).await;
    assert_eq!(count(&s, list).await, 1, "the reuse deleted nothing");
}
both!(webhook_register_and_delete);
