//! What holds for every route with the call ledger: keys scoped by project
//! and capability, a refused call leaves its key free, bad keys are 400,
//! answers are kept for the dedupe window, and no header costs nothing.

use jiff::SignedDuration;
use reqwest::Method;
use serde_json::json;

use super::call;
use crate::{
    both,
    harness::{Backend, TestServer},
};

async fn keys_are_scoped_by_project_and_capability(b: Backend) {
    let s = TestServer::in_process(b).await;
    call(
        &s,
        Method::POST,
        "/v1/queue/create",
        Some(json!({"name": "orders"})),
        "K",
    )
    .await
    .ok();
    // Another capability: another key, though spelled alike.
    let r = call(&s, Method::POST, "/v1/queue/purge/orders", None, "K").await;
    r.ok();
    assert_eq!(r.body["metadata"]["idempotent_replay"], false);
    // Another project: its own key.
    let r = s
        .send_as_with(
            &s.other_key,
            Method::POST,
            "/v1/queue/create",
            Some(json!({"name": "fresh"})),
            &[("idempotency-key", "K")],
        )
        .await;
    r.ok();
    assert_eq!(r.body["metadata"]["idempotent_replay"], false);
}
both!(keys_are_scoped_by_project_and_capability);

async fn a_refused_call_leaves_its_key_free(b: Backend) {
    let s = TestServer::in_process(b).await;
    let body = json!({"name": "orders", "dead_letter_queue": "graveyard"});
    call(
        &s,
        Method::POST,
        "/v1/queue/create",
        Some(body.clone()),
        "K",
    )
    .await
    .err(404, "QUEUE_NOT_FOUND");
    s.post("/v1/queue/create", json!({"name": "graveyard"}))
        .await
        .ok();
    let r = call(&s, Method::POST, "/v1/queue/create", Some(body), "K").await;
    r.ok();
    assert_eq!(
        r.body["metadata"]["idempotent_replay"], false,
        "refusals are not replayed"
    );
    assert_eq!(r.data()["dead_letter_queue"], "graveyard");
}
both!(a_refused_call_leaves_its_key_free);

async fn bad_keys_are_refused_naming_the_header(b: Backend) {
    let s = TestServer::in_process(b).await;
    let long = "k".repeat(256);
    let r = call(
        &s,
        Method::POST,
        "/v1/queue/create",
        Some(json!({"name": "orders"})),
        &long,
    )
    .await;
    let message = r.err(400, "INVALID_PARAMS");
    assert!(message.contains("Idempotency-Key"), "{message}");
    assert!(r.body["error"]["hint"].is_string());
    let r = s
        .send_with(
            Method::POST,
            "/v1/queue/create",
            Some(json!({"name": "orders"})),
            &[("idempotency-key", "a"), ("idempotency-key", "b")],
        )
        .await;
    let message = r.err(400, "INVALID_PARAMS");
    assert!(message.contains("exactly one Idempotency-Key"), "{message}");
    s.get("/v1/queue/get/orders")
        .await
        .err(404, "QUEUE_NOT_FOUND");
}
both!(bad_keys_are_refused_naming_the_header);

/// Visible ASCII means no space (issue 26): `a b` is refused on the call
/// ledger's routes and on publish, naming the header, with a hint; nothing
/// is done.
async fn a_key_with_a_space_is_refused(b: Backend) {
    let s = TestServer::in_process(b).await;
    for key in ["a b", " ab", "ab "] {
        let r = call(
            &s,
            Method::POST,
            "/v1/queue/create",
            Some(json!({"name": "orders"})),
            key,
        )
        .await;
        let message = r.err(400, "INVALID_PARAMS");
        assert!(
            message.contains("Idempotency-Key") && message.contains("a space"),
            "{key:?}: {message}"
        );
        assert!(r.body["error"]["hint"].is_string(), "{}", r.body);
        let r = call(
            &s,
            Method::POST,
            "/v1/queue/publish",
            Some(json!({"queue": "orders", "payload": 1})),
            key,
        )
        .await;
        let message = r.err(400, "INVALID_PARAMS");
        assert!(message.contains("Idempotency-Key"), "{key:?}: {message}");
    }
    s.get("/v1/queue/get/orders")
        .await
        .err(404, "QUEUE_NOT_FOUND");
    call(
        &s,
        Method::POST,
        "/v1/queue/create",
        Some(json!({"name": "orders"})),
        "a-b_c.d~!",
    )
    .await
    .ok();
}
both!(a_key_with_a_space_is_refused);

async fn answers_are_kept_for_the_dedupe_window(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.publish("orders", json!(1)).await;
    let path = "/v1/queue/purge/orders";
    call(&s, Method::POST, path, None, "K").await.ok();
    let window = SignedDuration::try_from(s.state.config.dedupe_window).unwrap();
    s.clock.advance(window - SignedDuration::from_secs(1));
    let r = call(&s, Method::POST, path, None, "K").await;
    assert_eq!(r.body["metadata"]["idempotent_replay"], true);
    s.clock.advance(SignedDuration::from_secs(1));
    onceq_server::maintenance::purger::pass(&s.state)
        .await
        .unwrap();
    s.publish("orders", json!(2)).await;
    let r = call(&s, Method::POST, path, None, "K").await;
    r.ok();
    assert_eq!(
        r.body["metadata"]["idempotent_replay"], false,
        "past the window: a new call"
    );
    assert_eq!(r.data()["purged"], 1);
}
both!(answers_are_kept_for_the_dedupe_window);

async fn a_replay_is_counted_and_never_charged(b: Backend) {
    let config = onceq_server::ServerConfig {
        prices: onceq_server::pricing::PriceTable::parse("queue.purge=0.001").unwrap(),
        ..onceq_server::ServerConfig::default()
    };
    let s = TestServer::in_process_with(b, config).await;
    s.publish("orders", json!(1)).await;
    let path = "/v1/queue/purge/orders";
    let first = call(&s, Method::POST, path, None, "K").await;
    assert_eq!(first.body["metadata"]["cost_usd"], 0.001);
    let again = call(&s, Method::POST, path, None, "K").await;
    assert_eq!(again.body["metadata"]["cost_usd"], 0.0);
    let usage = s.get("/v1/account/usage").await;
    let purge = usage.data()["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["capability"] == "queue.purge")
        .unwrap()
        .clone();
    assert_eq!(
        (
            &purge["calls"],
            &purge["billable_calls"],
            &purge["cost_usd"]
        ),
        (&json!(2), &json!(1), &json!(0.001)),
        "{purge}"
    );
}
both!(a_replay_is_counted_and_never_charged);

/// `/openapi.json` says which operations honour the header, from the same
/// list the router reads (`idempotency::IDEMPOTENT`).
async fn the_document_lists_the_header_where_it_is_honoured(b: Backend) {
    let s = TestServer::in_process(b).await;
    let doc = s.send(Method::GET, "/openapi.json", None, None).await;
    let op = |method: &str, path: &str| doc.body["paths"][path][method].clone();
    let has_header = |op: &serde_json::Value| {
        op["parameters"].as_array().is_some_and(|ps| {
            ps.iter()
                .any(|p| p["name"] == "Idempotency-Key" && p["in"] == "header")
        })
    };
    for c in onceq_server::idempotency::IDEMPOTENT {
        let op = op(&c.method.to_ascii_lowercase(), c.path);
        assert!(
            has_header(&op),
            "{} {} lacks the header: {op}",
            c.method,
            c.path
        );
        let codes = op["responses"]["409"].to_string();
        assert!(codes.contains("REQUEST_IN_FLIGHT"), "{}: {codes}", c.id);
        assert!(op["responses"]["422"].is_object(), "{}", c.id);
    }
    assert!(has_header(&op("post", "/v1/queue/publish_batch")));
    assert!(!has_header(&op("post", "/v1/queue/consume")));
    assert!(!has_header(&op("post", "/v1/admin/keys/create")));
}
both!(the_document_lists_the_header_where_it_is_honoured);
