//! The envelope on successes and errors; discovery; health; unknown routes.

use serde_json::json;

use crate::{
    both,
    harness::{Backend, TestServer},
};

async fn success_envelope_has_metadata(b: Backend) {
    let s = TestServer::in_process(b).await;
    let r = s
        .post(
            "/v1/queue/publish",
            json!({"queue": "q", "payload": {"a": 1}}),
        )
        .await;
    r.ok();
    let meta = &r.body["metadata"];
    let id = meta["request_id"].as_str().unwrap();
    let uuid = uuid::Uuid::parse_str(id).unwrap();
    assert_eq!(uuid.get_version_num(), 7);
    assert_eq!(r.headers["x-request-id"], id);
    assert!(meta["latency_ms"].as_f64().unwrap() >= 0.0);
    assert_eq!(meta["cost_usd"], 0.0);
    assert_eq!(meta["idempotent_replay"], false);
}
both!(success_envelope_has_metadata);

async fn unknown_route_and_method_are_enveloped(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.get("/v1/queue/nope").await.err(404, "NOT_FOUND");
    s.get("/v1/queue/publish")
        .await
        .err(405, "METHOD_NOT_ALLOWED");
}
both!(unknown_route_and_method_are_enveloped);

async fn discovery_lists_every_endpoint_with_prices(b: Backend) {
    let s = TestServer::in_process_with(b, TestServer::priced()).await;
    // no key needed
    let r = s
        .send(reqwest::Method::GET, "/v1/discovery", None, None)
        .await;
    r.ok();
    let caps = r.data()["capabilities"].as_array().unwrap();
    let ids: Vec<&str> = caps.iter().map(|c| c["id"].as_str().unwrap()).collect();
    for id in [
        "queue.publish",
        "queue.publish_batch",
        "queue.consume",
        "queue.ack",
        "queue.nack",
        "queue.extend",
        "queue.create",
        "queue.list",
        "queue.get",
        "queue.delete",
        "queue.stats",
        "queue.purge",
        "queue.dlq.redrive",
    ] {
        assert!(ids.contains(&id), "discovery lacks {id}");
    }
    let publish = caps.iter().find(|c| c["id"] == "queue.publish").unwrap();
    assert_eq!(publish["method"], "POST");
    assert_eq!(publish["path"], "/v1/queue/publish");
    assert_eq!(publish["billing"]["is_billable"], true);
    assert_eq!(publish["billing"]["price_usd"], 0.00002);
    assert_eq!(publish["billing"]["currency"], "USD");
    let consume = caps.iter().find(|c| c["id"] == "queue.consume").unwrap();
    assert_eq!(consume["billing"]["is_billable"], false);
    assert!(r.data()["version"].is_string());
}
both!(discovery_lists_every_endpoint_with_prices);

async fn health_and_readiness(b: Backend) {
    let s = TestServer::in_process(b).await;
    let r = s.http.get(s.url("/healthz")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let r = s.http.get(s.url("/readyz")).send().await.unwrap();
    assert_eq!(r.status(), 200);
}
both!(health_and_readiness);
