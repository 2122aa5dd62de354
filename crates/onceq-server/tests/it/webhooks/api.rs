//! The webhook calls and their refusals: a generated secret shown once,
//! lists without secrets, every field's 400 (naming it, with a hint), the
//! SSRF guard at register time, the per-project limit, 404s, tenancy,
//! scopes, delete by DELETE and POST.

use onceq_server::ServerConfig;
use serde_json::json;

use super::{SECRET, register};
use crate::{
    both,
    harness::{Backend, TestServer},
};

async fn register_list_delete(b: Backend) {
    let s = TestServer::start_with(b, crate::push::config()).await;
    let r = s
        .post(
            "/v1/account/webhooks/register",
            json!({"url": "https://hooks.example/in", "events": ["queue.created", "*"],
                   "description": "ops", "headers": {"X-Team": "ops"}}),
        )
        .await;
    r.ok();
    let made = r.data().clone();
    let id = made["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("whk_"));
    assert!(
        made["secret"].as_str().unwrap().starts_with("whsec_"),
        "generated, shown once"
    );
    assert_eq!(made["events"], json!(["queue.created", "*"]));
    assert_eq!(made["headers"], json!({"x-team": "ops"}));
    assert_eq!(made["description"], "ops");
    let listed = s.get("/v1/account/webhooks/list").await;
    listed.ok();
    let items = listed.data()["items"].as_array().unwrap().clone();
    assert_eq!(items.len(), 1);
    assert!(
        items[0].get("secret").is_none(),
        "never shown again: {}",
        items[0]
    );
    assert_eq!(items[0]["id"], id);
    // Another project sees none of it.
    let other = s
        .get_as(&s.other_key.clone(), "/v1/account/webhooks/list")
        .await;
    assert_eq!(other.data()["items"], json!([]));
    let key = s.key.clone();
    let r = s
        .send(
            reqwest::Method::DELETE,
            &format!("/v1/account/webhooks/delete/{id}"),
            None,
            Some(&key),
        )
        .await;
    assert_eq!(r.ok().data()["deleted"], true);
    s.post(&format!("/v1/account/webhooks/delete/{id}"), json!({}))
        .await
        .err(404, "NOT_FOUND");
    let second = register(&s, "https://hooks.example/2", json!(["*"])).await;
    s.post(
        &format!(
            "/v1/account/webhooks/delete/{}",
            second["id"].as_str().unwrap()
        ),
        json!({}),
    )
    .await
    .ok();
    assert_eq!(
        s.get("/v1/account/webhooks/list").await.data()["items"],
        json!([])
    );
}
both!(register_list_delete);

async fn bad_input_names_the_field(b: Backend) {
    let s = TestServer::start_with(b, crate::push::config()).await;
    let cases = [
        (json!({"events": ["*"]}), "url"),
        (json!({"url": "ftp://h.example/", "events": ["*"]}), "url"),
        (json!({"url": "https://h.example/"}), "events"),
        (json!({"url": "https://h.example/", "events": []}), "events"),
        (
            json!({"url": "https://h.example/", "events": ["queue.created", "queue.exploded"]}),
            "events[1]",
        ),
        (
            json!({"url": "https://h.example/", "events": ["*"], "secret": "short"}),
            "secret",
        ),
        (
            json!({"url": "https://h.example/", "events": ["*"], "description": "x".repeat(501)}),
            "description",
        ),
        (
            json!({"url": "https://h.example/", "events": ["*"], "headers": {"onceq-event-id": "x"}}),
            "headers.onceq-event-id",
        ),
        (
            json!({"url": "https://h.example/", "events": ["*"], "headers": ["x"]}),
            "headers",
        ),
    ];
    for (body, field) in cases {
        let r = s.post("/v1/account/webhooks/register", body.clone()).await;
        let message = r.err(400, "INVALID_PARAMS");
        assert!(message.contains(field), "{body}: {message}");
        assert!(r.body["error"]["hint"].is_string(), "{}", r.body);
    }
    let r = s
        .post(
            "/v1/account/webhooks/register",
            json!({"url": "https://h.example/", "events": ["queue.exploded"]}),
        )
        .await;
    r.err(400, "INVALID_PARAMS");
    let hint = r.body["error"]["hint"].as_str().unwrap();
    assert!(
        hint.contains("message.dead_lettered") && hint.contains("credit.exhausted"),
        "{hint}"
    );
    s.get("/v1/account/webhooks/deliveries/whk_nope")
        .await
        .err(404, "NOT_FOUND");
    s.post("/v1/account/webhooks/test/whk_nope", json!({}))
        .await
        .err(404, "NOT_FOUND");
    s.get("/v1/account/webhooks/deliveries/whk_nope?limit=0")
        .await
        .err(400, "INVALID_PARAMS");
    assert_eq!(
        s.get("/v1/account/webhooks/list").await.data()["items"],
        json!([]),
        "nothing half-stored"
    );
}
both!(bad_input_names_the_field);

/// As for push: loopback only where the operator allows it.
async fn loopback_refused_unless_allowed(b: Backend) {
    let s = TestServer::start_with(b, ServerConfig::default()).await;
    for url in [
        "http://127.0.0.1:9/hook",
        "https://localhost/hook",
        "https://10.0.0.5/hook",
    ] {
        let message = s
            .post(
                "/v1/account/webhooks/register",
                json!({"url": url, "events": ["*"]}),
            )
            .await
            .err(400, "INVALID_PARAMS");
        assert!(message.contains("url"), "{url}: {message}");
    }
    let allowed = TestServer::start_with(b, crate::push::config()).await;
    register(&allowed, "http://127.0.0.1:9/hook", json!(["*"])).await;
}
both!(loopback_refused_unless_allowed);

async fn at_most_twenty_per_project(b: Backend) {
    let s = TestServer::start_with(b, crate::push::config()).await;
    for i in 0..20 {
        register(&s, &format!("https://h{i}.example/"), json!(["*"])).await;
    }
    let r = s
        .post(
            "/v1/account/webhooks/register",
            json!({"url": "https://h.example/", "events": ["*"], "secret": SECRET}),
        )
        .await;
    let message = r.err(400, "INVALID_PARAMS");
    assert!(message.contains("20 webhooks"), "{message}");
    assert!(
        r.body["error"]["hint"].as_str().unwrap().contains("delete"),
        "{}",
        r.body
    );
    // Another project has its own twenty.
    s.post_as(
        &s.other_key.clone(),
        "/v1/account/webhooks/register",
        json!({"url": "https://h.example/", "events": ["*"]}),
    )
    .await
    .ok();
}
both!(at_most_twenty_per_project);

async fn scopes(b: Backend) {
    let s = TestServer::start_with(b, crate::push::config()).await;
    let hook = register(&s, "https://h.example/", json!(["*"])).await;
    let id = hook["id"].as_str().unwrap();
    let reader = s.scoped_key("alpha", "read", "*").await;
    s.get_as(&reader, "/v1/account/webhooks/list").await.ok();
    s.post_as(
        &reader,
        "/v1/account/webhooks/register",
        json!({"url": "https://h.example/", "events": ["*"]}),
    )
    .await
    .err(403, "FORBIDDEN");
    s.post_as(
        &reader,
        &format!("/v1/account/webhooks/delete/{id}"),
        json!({}),
    )
    .await
    .err(403, "FORBIDDEN");
    // A key limited to some queues would hear of every queue: refused.
    let narrow = s.scoped_key("alpha", "full", "exports-*").await;
    let r = s.get_as(&narrow, "/v1/account/webhooks/list").await;
    r.err(403, "FORBIDDEN");
    assert!(r.body["error"]["hint"].as_str().unwrap().contains('*'));
    // Another project's key cannot reach it.
    let other = s.other_key.clone();
    s.get_as(&other, &format!("/v1/account/webhooks/deliveries/{id}"))
        .await
        .err(404, "NOT_FOUND");
    s.post_as(
        &other,
        &format!("/v1/account/webhooks/delete/{id}"),
        json!({}),
    )
    .await
    .err(404, "NOT_FOUND");
}
both!(scopes);

async fn listed_in_discovery(b: Backend) {
    let s = TestServer::in_process(b).await;
    let r = s
        .send(reqwest::Method::GET, "/v1/discovery", None, None)
        .await;
    let caps = r.ok().data()["capabilities"].as_array().unwrap().clone();
    for (id, method, path) in [
        (
            "account.webhooks.register",
            "POST",
            "/v1/account/webhooks/register",
        ),
        ("account.webhooks.list", "GET", "/v1/account/webhooks/list"),
        (
            "account.webhooks.deliveries",
            "GET",
            "/v1/account/webhooks/deliveries/{id}",
        ),
        (
            "account.webhooks.test",
            "POST",
            "/v1/account/webhooks/test/{id}",
        ),
        (
            "account.webhooks.delete",
            "DELETE",
            "/v1/account/webhooks/delete/{id}",
        ),
    ] {
        let c = caps
            .iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("{id}"));
        assert_eq!(
            (c["method"].as_str(), c["path"].as_str()),
            (Some(method), Some(path))
        );
    }
}
both!(listed_in_discovery);
