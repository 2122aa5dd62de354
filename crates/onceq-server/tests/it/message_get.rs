//! `GET /v1/queue/message/{queue}/{message_id}` (queue-api-2.md section
//! 5): the message wherever it is, and 404 `MESSAGE_NOT_FOUND` once gone.

use serde_json::json;

use crate::{
    both,
    harness::{Backend, TestServer},
};

async fn message_get_follows_a_message_through_its_life(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.post(
        "/v1/queue/create",
        json!({"name": "jobs", "max_retries": 0}),
    )
    .await
    .ok();
    let r = s
        .post(
            "/v1/queue/publish",
            json!({"queue": "jobs", "payload": {"job": "export"}, "idempotency_key": "k-1", "priority": 4,
                   "headers": {"X-Tenant": "acme"}}),
        )
        .await;
    let id = r.ok().data()["message_id"].as_str().unwrap().to_owned();
    let path = format!("/v1/queue/message/jobs/{id}");

    let m = s.get(&path).await;
    let d = m.ok().data();
    assert_eq!(d["message_id"], id.as_str());
    assert_eq!(d["queue"], "jobs");
    assert_eq!(d["state"], "available");
    assert_eq!(d["payload"], json!({"job": "export"}));
    assert_eq!(d["priority"], 4);
    assert_eq!(d["idempotency_key"], "k-1");
    assert_eq!(d["delivery_count"], 0);
    assert!(d["message_group_id"].is_null());
    assert!(d["lease_expires_at"].is_null());
    assert_eq!(d["created_at"], r.data()["created_at"]);
    assert!(d["visible_at"].is_string());
    assert_eq!(d["headers"], json!({"x-tenant": "acme"}));
    // Nothing ended yet: the contract's empty values.
    assert_eq!(d["attempts"], json!([]));
    for empty in ["completed_at", "result", "last_error"] {
        assert!(d[empty].is_null(), "{empty}: {d}");
    }

    let got = s.post("/v1/queue/consume", json!({"queue": "jobs"})).await;
    let item = got.ok().data()["items"][0].clone();
    let held = s.get(&path).await;
    assert_eq!(held.ok().data()["state"], "in_flight");
    assert_eq!(held.data()["delivery_count"], 1);
    assert_eq!(held.data()["lease_expires_at"], item["lease_expires_at"]);

    s.post(
        "/v1/queue/nack",
        json!({"queue": "jobs", "message_id": id, "receipt": item["receipt"], "error": "boom"}),
    )
    .await
    .ok();
    let dead = s.get(&path).await;
    assert_eq!(dead.ok().data()["state"], "dead_lettered");
    assert_eq!(dead.data()["queue"], "jobs");
    assert_eq!(dead.data()["payload"], json!({"job": "export"}));
    // The failure that dead-lettered it, with the nack's reason.
    assert_eq!(dead.data()["last_error"], "boom");
    let attempts = dead.data()["attempts"].as_array().unwrap().clone();
    assert_eq!(attempts.len(), 1, "{attempts:?}");
    assert_eq!(attempts[0]["outcome"], "dead_lettered");
    assert_eq!(attempts[0]["error"], "boom");
    assert_eq!(attempts[0]["delivery_count"], 1);
    assert!(attempts[0]["consumed_at"].is_string() && attempts[0]["ended_at"].is_string());

    s.post("/v1/queue/purge/jobs-dlq", json!({})).await.ok();
    let gone = s.get(&path).await;
    let message = gone.err(404, "MESSAGE_NOT_FOUND");
    assert!(
        message.contains(&id) && message.contains("jobs"),
        "{message}"
    );
    assert!(gone.body["error"]["hint"].is_string(), "{}", gone.body);
}
both!(message_get_follows_a_message_through_its_life);

async fn message_get_delayed_and_errors(b: Backend) {
    let s = TestServer::in_process(b).await;
    let r = s
        .post(
            "/v1/queue/publish",
            json!({"queue": "jobs", "payload": [1], "delay_seconds": 600}),
        )
        .await;
    let id = r.ok().data()["message_id"].as_str().unwrap().to_owned();
    let d = s.get(&format!("/v1/queue/message/jobs/{id}")).await;
    assert_eq!(d.ok().data()["state"], "delayed");

    s.get("/v1/queue/message/jobs/qmsg_nope")
        .await
        .err(404, "MESSAGE_NOT_FOUND");
    // Another queue's message is not this queue's.
    s.publish("others", json!(1)).await;
    s.get(&format!("/v1/queue/message/others/{id}"))
        .await
        .err(404, "MESSAGE_NOT_FOUND");
    let q = s.get(&format!("/v1/queue/message/ghost/{id}")).await;
    assert!(q.err(404, "QUEUE_NOT_FOUND").contains("ghost"));
    let bad = s.get(&format!("/v1/queue/message/a%20b/{id}")).await;
    assert!(bad.err(400, "INVALID_PARAMS").contains("queue"));
    // Another project sees nothing of it.
    let beta = s.scoped_key("beta", "all", "*").await;
    s.get_as(&beta, &format!("/v1/queue/message/jobs/{id}"))
        .await
        .err(404, "QUEUE_NOT_FOUND");
}
both!(message_get_delayed_and_errors);

/// Both new endpoints are in discovery and in the OpenAPI document, under
/// operationIds of their own.
#[tokio::test]
async fn update_and_message_get_are_discovered_and_documented() {
    let s = TestServer::in_process(Backend::Sqlite).await;
    let d = s.get("/v1/discovery").await;
    let caps = d.ok().data()["capabilities"].as_array().unwrap().clone();
    for (id, method, path) in [
        ("queue.update", "POST", "/v1/queue/update"),
        (
            "queue.message.get",
            "GET",
            "/v1/queue/message/{queue}/{message_id}",
        ),
    ] {
        assert!(
            caps.iter()
                .any(|c| c["id"] == id && c["method"] == method && c["path"] == path),
            "{id} not in discovery"
        );
    }
    let doc = serde_json::to_value(onceq_server::openapi::document()).unwrap();
    let update = &doc["paths"]["/v1/queue/update"]["post"];
    assert_eq!(update["operationId"], "queue_update");
    let get = &doc["paths"]["/v1/queue/message/{queue}/{message_id}"]["get"];
    assert_eq!(get["operationId"], "message_get");
    let codes = &get["responses"]["404"]["content"]["application/json"]["schema"]["properties"]["error"]
        ["properties"]["code"]["enum"];
    assert_eq!(codes, &json!(["QUEUE_NOT_FOUND", "MESSAGE_NOT_FOUND"]));
    let body = &doc["components"]["schemas"]["UpdateQueue"]["properties"];
    // Every setting of section 6 is documented.
    for field in [
        "max_retries",
        "retry_backoff",
        "max_in_flight",
        "rate_per_sec",
        "completed_retention_seconds",
    ] {
        assert!(body.get(field).is_some(), "{field}: {body}");
    }
}
