//! `push_subscribe`, `push_subscriptions`, `push_unsubscribe`: answers,
//! validation (every refusal a 4xx naming the field, nothing stored) and
//! the SSRF guard's refusals.

use onceq_server::{ServerConfig, push::PushConfig};
use serde_json::{Value, json};

use super::{SECRET, config, subscribe};
use crate::{
    both,
    harness::{Backend, TestServer},
};

async fn listed(s: &TestServer, queue: &str) -> Vec<Value> {
    let r = s
        .get(&format!("/v1/queue/push_subscriptions/{queue}"))
        .await;
    r.ok();
    r.data()["items"].as_array().unwrap().clone()
}

async fn subscribe_list_unsubscribe(b: Backend) {
    let s = TestServer::in_process_with(b, config()).await;
    s.post("/v1/queue/create", json!({"name": "jobs"}))
        .await
        .ok();

    // Given secret and settings; `endpoint` names the URL as well as `url`.
    let r = s
        .post(
            "/v1/queue/push_subscribe/jobs",
            json!({"endpoint": "https://hooks.example.com", "secret": SECRET, "max_in_flight": 3, "timeout_seconds": 7.0}),
        )
        .await;
    r.ok();
    let a = r.data().clone();
    let id = a["subscription_id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("psub_"), "{a}");
    assert_eq!(a["queue"], "jobs");
    // As normalised: what deliveries request.
    assert_eq!(a["url"], "https://hooks.example.com/");
    assert_eq!(a["max_in_flight"], 3);
    assert_eq!(a["timeout_seconds"], 7);
    assert_eq!(a["secret"], SECRET);
    assert_eq!(a["created_at"], "2026-07-26T12:00:00Z");

    // Defaults, and a generated secret, shown once.
    let r = s
        .post(
            "/v1/queue/push_subscribe/jobs",
            json!({"url": "https://hooks.example.com/b?x=1"}),
        )
        .await;
    r.ok();
    let b2 = r.data().clone();
    assert_eq!(b2["max_in_flight"], 10);
    assert_eq!(b2["timeout_seconds"], 30);
    let secret = b2["secret"].as_str().unwrap();
    assert!(
        secret.starts_with("whsec_") && secret.len() == 6 + 64,
        "{secret}"
    );

    // Listed oldest first, without secrets.
    let items = listed(&s, "jobs").await;
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["subscription_id"], a["subscription_id"]);
    assert_eq!(items[1]["url"], "https://hooks.example.com/b?x=1");
    assert!(items.iter().all(|i| i.get("secret").is_none()), "{items:?}");

    // Another project sees none of it.
    let r = s
        .send(
            reqwest::Method::GET,
            "/v1/queue/push_subscriptions/jobs",
            None,
            Some(&s.other_key),
        )
        .await;
    r.err(404, "QUEUE_NOT_FOUND");

    // Unsubscribe: DELETE, or POST to the same path.
    let path = format!("/v1/queue/push_unsubscribe/jobs/{id}");
    let r = s
        .send(reqwest::Method::DELETE, &path, None, Some(&s.key))
        .await;
    r.ok();
    assert_eq!(
        r.data(),
        &json!({"subscription_id": id, "queue": "jobs", "deleted": true})
    );
    let msg = s.post(&path, json!({})).await.err(404, "NOT_FOUND");
    assert!(msg.contains(&id), "{msg}");
    let other = b2["subscription_id"].as_str().unwrap();
    s.post(
        &format!("/v1/queue/push_unsubscribe/jobs/{other}"),
        json!({}),
    )
    .await
    .ok();
    assert!(listed(&s, "jobs").await.is_empty());

    // Deleting the queue deletes its subscriptions.
    subscribe(&s, "jobs", "https://hooks.example.com/c", json!({})).await;
    s.send(
        reqwest::Method::DELETE,
        "/v1/queue/delete/jobs",
        None,
        Some(&s.key),
    )
    .await
    .ok();
    s.post("/v1/queue/create", json!({"name": "jobs"}))
        .await
        .ok();
    assert!(listed(&s, "jobs").await.is_empty());
}
both!(subscribe_list_unsubscribe);

async fn bad_requests_name_the_field_and_store_nothing(b: Backend) {
    let s = TestServer::in_process_with(b, config()).await;
    s.post("/v1/queue/create", json!({"name": "jobs"}))
        .await
        .ok();
    let ok = "https://hooks.example.com/x";
    for (body, field) in [
        (json!({}), "url is required"),
        (json!({"url": 5}), "url"),
        (
            json!({"url": ok, "endpoint": "https://other.example.com"}),
            "endpoint",
        ),
        (
            json!({"url": "hooks.example.com/x"}),
            "url is not a valid URL",
        ),
        (
            json!({"endpoint": "mailto:a@example.com"}),
            "endpoint must be an https:// URL",
        ),
        (
            json!({"url": "https://u:p@hooks.example.com/"}),
            "url must not contain credentials",
        ),
        (
            json!({"url": ok, "max_in_flight": 0}),
            "max_in_flight must be between 1 and 100",
        ),
        (
            json!({"url": ok, "max_in_flight": 101}),
            "max_in_flight must be between 1 and 100",
        ),
        (json!({"url": ok, "max_in_flight": "2"}), "max_in_flight"),
        (json!({"url": ok, "max_in_flight": 2.5}), "max_in_flight"),
        (
            json!({"url": ok, "timeout_seconds": 0}),
            "timeout_seconds must be between 1 and 300",
        ),
        (
            json!({"url": ok, "timeout_seconds": 301}),
            "timeout_seconds must be between 1 and 300",
        ),
        (
            json!({"url": ok, "secret": "short"}),
            "secret must be 16 to 255",
        ),
        (
            json!({"url": ok, "secret": "has spaces in it, sixteen+"}),
            "a space at byte 3",
        ),
        (
            json!({"url": ok, "secret": "x".repeat(256)}),
            "secret must be 16 to 255 bytes long",
        ),
    ] {
        let msg = s
            .post("/v1/queue/push_subscribe/jobs", body.clone())
            .await
            .err(400, "INVALID_PARAMS");
        assert!(msg.contains(field), "{body}: {msg}");
    }
    // Bad names in the path.
    s.post("/v1/queue/push_subscribe/bad%20name", json!({"url": ok}))
        .await
        .err(400, "INVALID_PARAMS");
    s.send(
        reqwest::Method::DELETE,
        "/v1/queue/push_unsubscribe/bad%20name/psub_x",
        None,
        Some(&s.key),
    )
    .await
    .err(400, "INVALID_PARAMS");
    // The queue must exist: subscribing does not create it.
    for r in [
        s.post("/v1/queue/push_subscribe/nope", json!({"url": ok}))
            .await,
        s.get("/v1/queue/push_subscriptions/nope").await,
        s.send(
            reqwest::Method::DELETE,
            "/v1/queue/push_unsubscribe/nope/psub_x",
            None,
            Some(&s.key),
        )
        .await,
    ] {
        let msg = r.err(404, "QUEUE_NOT_FOUND");
        assert!(msg.contains("nope"), "{msg}");
    }
    s.get("/v1/queue/get/nope")
        .await
        .err(404, "QUEUE_NOT_FOUND");
    assert!(listed(&s, "jobs").await.is_empty(), "nothing stored");

    // At most 10 per queue.
    for i in 0..10 {
        subscribe(&s, "jobs", &format!("{ok}/{i}"), json!({})).await;
    }
    let msg = s
        .post("/v1/queue/push_subscribe/jobs", json!({"url": ok}))
        .await
        .err(400, "INVALID_PARAMS");
    assert!(msg.contains("10 push subscriptions"), "{msg}");
    assert_eq!(listed(&s, "jobs").await.len(), 10);

    // No key, no subscription.
    s.send(
        reqwest::Method::POST,
        "/v1/queue/push_subscribe/jobs",
        Some(json!({"url": ok})),
        None,
    )
    .await
    .err(401, "UNAUTHORIZED");
}
both!(bad_requests_name_the_field_and_store_nothing);

async fn http_and_internal_targets_are_refused_by_default(b: Backend) {
    // The server as shipped: no --push-allow-loopback, no --push-allow-http.
    let s = TestServer::in_process(b).await;
    s.post("/v1/queue/create", json!({"name": "jobs"}))
        .await
        .ok();
    for (url, why) in [
        ("http://127.0.0.1:9/hook", "https://"),
        ("http://hooks.example.com/hook", "https://"),
        ("https://127.0.0.1/hook", "loopback"),
        ("https://localhost:8443/hook", "loopback"),
        ("https://[::1]/hook", "loopback"),
        ("https://10.1.2.3/hook", "internal address"),
        ("https://192.168.0.10/hook", "internal address"),
        (
            "https://169.254.169.254/latest/meta-data/",
            "internal address",
        ),
        ("https://[fd00::1]/hook", "internal address"),
    ] {
        let msg = s
            .post("/v1/queue/push_subscribe/jobs", json!({"url": url}))
            .await
            .err(400, "INVALID_PARAMS");
        assert!(msg.starts_with("url "), "{url}: {msg}");
        assert!(msg.contains(why), "{url}: {msg}");
    }
    assert!(listed(&s, "jobs").await.is_empty());

    // A host the operator lists may be reached over http://, internal or not.
    let trusting = TestServer::in_process_with(
        b,
        ServerConfig {
            push: PushConfig {
                allow_http_hosts: vec!["hooks.internal".into(), "10.1.2.3".into()],
                ..PushConfig::default()
            },
            ..ServerConfig::default()
        },
    )
    .await;
    trusting
        .post("/v1/queue/create", json!({"name": "jobs"}))
        .await
        .ok();
    for url in ["http://hooks.internal/hook", "http://10.1.2.3:8080/hook"] {
        subscribe(&trusting, "jobs", url, json!({})).await;
    }
    trusting
        .post(
            "/v1/queue/push_subscribe/jobs",
            json!({"url": "http://127.0.0.1:9/hook"}),
        )
        .await
        .err(400, "INVALID_PARAMS");
}
both!(http_and_internal_targets_are_refused_by_default);

async fn discovery_lists_the_push_endpoints(b: Backend) {
    let s = TestServer::in_process(b).await;
    let r = s
        .send(reqwest::Method::GET, "/v1/discovery", None, None)
        .await;
    let caps = r.data()["capabilities"].as_array().unwrap().clone();
    for (id, method, path) in [
        (
            "queue.push_subscribe",
            "POST",
            "/v1/queue/push_subscribe/{queue}",
        ),
        (
            "queue.push_subscriptions",
            "GET",
            "/v1/queue/push_subscriptions/{queue}",
        ),
        (
            "queue.push_unsubscribe",
            "DELETE",
            "/v1/queue/push_unsubscribe/{queue}/{subscription_id}",
        ),
    ] {
        let c = caps
            .iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("discovery lacks {id}"));
        assert_eq!(
            (c["method"].as_str(), c["path"].as_str()),
            (Some(method), Some(path))
        );
    }
}
both!(discovery_lists_the_push_endpoints);
