//! A message's whole life over HTTP (queue-api-2.md §5): nack errors and
//! lease expiries as attempts, `completed_retention_seconds` and `ack
//! {result}`, `POST /v1/queue/cancel`, redrive by `message_ids`, the wait
//! and run histograms and nacks by error in `/metrics`, and each
//! one's refusals (400/413 naming the field, with a hint, nothing stored).

use onceq_server::config::ServerConfig;
use serde_json::{Value, json};

use crate::{
    both,
    harness::{Backend, TestServer},
};

async fn consume_one(s: &TestServer, queue: &str) -> Value {
    let got = s.post("/v1/queue/consume", json!({"queue": queue})).await;
    got.ok().data()["items"][0].clone()
}

async fn detail(s: &TestServer, queue: &str, id: &str) -> Value {
    let r = s.get(&format!("/v1/queue/message/{queue}/{id}")).await;
    r.ok().data().clone()
}

async fn a_kept_ack_is_completed_with_its_result(b: Backend) {
    let s = TestServer::in_process(b).await;
    let q = s
        .post(
            "/v1/queue/create",
            json!({"name": "jobs", "completed_retention_seconds": 3600}),
        )
        .await;
    assert_eq!(q.ok().data()["completed_retention_seconds"], 3600);
    let id = s.publish("jobs", json!({"job": 1})).await;
    let item = consume_one(&s, "jobs").await;
    let acked = s
        .post(
            "/v1/queue/ack",
            json!({"queue": "jobs", "message_id": id, "receipt": item["receipt"],
                   "result": {"rows": 3, "file": "a.csv"}}),
        )
        .await;
    assert_eq!(acked.ok().data()["acked"], true);
    let d = detail(&s, "jobs", &id).await;
    assert_eq!(d["state"], "completed");
    assert_eq!(d["result"], json!({"file": "a.csv", "rows": 3}));
    assert!(d["completed_at"].is_string(), "{d}");
    assert_eq!(d["attempts"][0]["outcome"], "acked");
    assert_eq!(d["payload"], json!({"job": 1}));
    let stats = s.stats("jobs").await;
    assert_eq!(stats["message_count"], 0, "{stats}");

    // Later, the purger removes it.
    s.clock.advance(jiff::SignedDuration::from_secs(3600));
    onceq_server::maintenance::purger::pass(&s.state)
        .await
        .unwrap();
    s.get(&format!("/v1/queue/message/jobs/{id}"))
        .await
        .err(404, "MESSAGE_NOT_FOUND");
}
both!(a_kept_ack_is_completed_with_its_result);

async fn ack_result_and_retention_refusals(b: Backend) {
    let s = TestServer::in_process(b).await;
    for bad in [json!(-1), json!(2_592_001), json!("60")] {
        let r = s
            .post(
                "/v1/queue/create",
                json!({"name": "jobs", "completed_retention_seconds": bad}),
            )
            .await;
        assert!(
            r.err(400, "INVALID_PARAMS")
                .contains("completed_retention_seconds"),
            "{bad}"
        );
        assert!(r.body["error"]["hint"].is_string(), "{}", r.body);
    }
    s.get("/v1/queue/get/jobs")
        .await
        .err(404, "QUEUE_NOT_FOUND");
    s.post("/v1/queue/create", json!({"name": "jobs"}))
        .await
        .ok();
    let u = s
        .post(
            "/v1/queue/update",
            json!({"name": "jobs", "completed_retention_seconds": 60}),
        )
        .await;
    assert_eq!(u.ok().data()["completed_retention_seconds"], 60);
    let bad = s
        .post(
            "/v1/queue/update",
            json!({"name": "jobs", "completed_retention_seconds": 9_999_999}),
        )
        .await;
    assert!(
        bad.err(400, "INVALID_PARAMS")
            .contains("completed_retention_seconds")
    );

    let id = s.publish("jobs", json!(1)).await;
    let item = consume_one(&s, "jobs").await;
    let big = "x".repeat(onceq_types::attempt::MAX_ACK_RESULT_BYTES);
    let r = s
        .post(
            "/v1/queue/ack",
            json!({"queue": "jobs", "message_id": id, "receipt": item["receipt"], "result": big}),
        )
        .await;
    assert_eq!(r.status, 413, "{}", r.body);
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("result")
    );
    assert!(r.body["error"]["hint"].is_string(), "{}", r.body);
    // Refused whole: the lease is still held, the message still in flight.
    assert_eq!(detail(&s, "jobs", &id).await["state"], "in_flight");

    let long = "e".repeat(onceq_types::attempt::MAX_NACK_ERROR_BYTES + 1);
    let r = s
        .post(
            "/v1/queue/nack",
            json!({"queue": "jobs", "message_id": id, "receipt": item["receipt"], "error": long}),
        )
        .await;
    assert!(r.err(400, "INVALID_PARAMS").contains("error"));
    assert!(r.body["error"]["hint"].is_string());
    assert_eq!(detail(&s, "jobs", &id).await["attempts"], json!([]));
}
both!(ack_result_and_retention_refusals);

async fn the_server_wide_retention_is_the_create_default(b: Backend) {
    let config = ServerConfig {
        completed_retention_seconds: 120,
        ..ServerConfig::default()
    };
    let s = TestServer::in_process_with(b, config).await;
    let q = s.post("/v1/queue/create", json!({"name": "jobs"})).await;
    assert_eq!(q.ok().data()["completed_retention_seconds"], 120);
    let own = s
        .post(
            "/v1/queue/create",
            json!({"name": "other", "completed_retention_seconds": 0}),
        )
        .await;
    assert_eq!(own.ok().data()["completed_retention_seconds"], 0);
    // A queue created by its first publish takes it too.
    s.publish("implicit", json!(1)).await;
    let q = s.get("/v1/queue/get/implicit").await;
    assert_eq!(q.ok().data()["completed_retention_seconds"], 120);
}
both!(the_server_wide_retention_is_the_create_default);

async fn a_lease_expiry_is_recorded_with_its_own_error(b: Backend) {
    let s = TestServer::in_process(b).await;
    let id = s.publish("jobs", json!(1)).await;
    s.post(
        "/v1/queue/consume",
        json!({"queue": "jobs", "visibility_timeout": 30}),
    )
    .await
    .ok();
    s.expire_leases_after(31).await;
    let d = detail(&s, "jobs", &id).await;
    assert_eq!(d["state"], "available");
    let text = "lease expired after 30 s without ack or extend";
    assert_eq!(d["last_error"], text);
    assert_eq!(d["attempts"][0]["outcome"], "lease_expired");
    assert_eq!(d["attempts"][0]["error"], text);
}
both!(a_lease_expiry_is_recorded_with_its_own_error);

async fn cancel_removes_a_message_and_ends_its_lease(b: Backend) {
    let s = TestServer::in_process(b).await;
    let waiting = s.publish("jobs", json!(1)).await;
    let c = s
        .post(
            "/v1/queue/cancel",
            json!({"queue": "jobs", "message_id": waiting}),
        )
        .await;
    assert_eq!(c.ok().data(), &json!({"cancelled": true}));
    let again = s
        .post(
            "/v1/queue/cancel",
            json!({"queue": "jobs", "message_id": waiting}),
        )
        .await;
    assert_eq!(again.ok().data(), &json!({"cancelled": false}));

    let held = s.publish("jobs", json!(2)).await;
    let item = consume_one(&s, "jobs").await;
    s.post(
        "/v1/queue/cancel",
        json!({"queue": "jobs", "message_id": held}),
    )
    .await
    .ok();
    let ack = s
        .post(
            "/v1/queue/ack",
            json!({"queue": "jobs", "message_id": held, "receipt": item["receipt"]}),
        )
        .await;
    assert_eq!(ack.ok().data()["acked"], false);
    let extend = s
        .post(
            "/v1/queue/extend",
            json!({"queue": "jobs", "message_id": held, "receipt": item["receipt"], "visibility_timeout": 60}),
        )
        .await;
    assert_eq!(extend.ok().data()["extended"], false);

    let missing = s.post("/v1/queue/cancel", json!({"queue": "jobs"})).await;
    assert!(missing.err(400, "INVALID_PARAMS").contains("message_id"));
    assert!(
        missing.body["error"]["hint"].is_string(),
        "{}",
        missing.body
    );
    let ghost = s
        .post(
            "/v1/queue/cancel",
            json!({"queue": "ghost", "message_id": held}),
        )
        .await;
    assert!(ghost.err(404, "QUEUE_NOT_FOUND").contains("ghost"));
    // A key without the admin action may not cancel.
    let reader = s.scoped_key("default", "consume", "*").await;
    s.post_as(
        &reader,
        "/v1/queue/cancel",
        json!({"queue": "jobs", "message_id": held}),
    )
    .await
    .err(403, "FORBIDDEN");
}
both!(cancel_removes_a_message_and_ends_its_lease);

async fn cancel_keeps_a_cancelled_message_while_retained(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.post(
        "/v1/queue/create",
        json!({"name": "jobs", "completed_retention_seconds": 60}),
    )
    .await
    .ok();
    let id = s.publish("jobs", json!(1)).await;
    consume_one(&s, "jobs").await;
    s.post(
        "/v1/queue/cancel",
        json!({"queue": "jobs", "message_id": id}),
    )
    .await
    .ok();
    let d = detail(&s, "jobs", &id).await;
    assert_eq!(d["state"], "cancelled");
    assert!(d["completed_at"].is_string());
    assert!(d["result"].is_null());
    assert_eq!(d["attempts"][0]["outcome"], "cancelled");
}
both!(cancel_keeps_a_cancelled_message_while_retained);

async fn redrive_chosen_dead_letters(b: Backend) {
    let s = TestServer::in_process(b).await;
    let mut ids = Vec::new();
    for n in 0..3 {
        let id = s.publish("jobs", json!(n)).await;
        let item = consume_one(&s, "jobs").await;
        s.post(
            "/v1/queue/nack",
            json!({"queue": "jobs", "message_id": id, "receipt": item["receipt"], "requeue": false,
                   "error": format!("bad {n}")}),
        )
        .await
        .ok();
        ids.push(id);
    }
    let r = s
        .post(
            "/v1/queue/dlq/redrive/jobs",
            json!({"message_ids": [ids[2], "qmsg_missing", ids[0], ids[2]]}),
        )
        .await;
    let d = r.ok().data().clone();
    assert_eq!(d["redriven"], 2, "{d}");
    assert_eq!(d["not_found"], json!(["qmsg_missing"]));
    assert_eq!(d["in_flight"], json!([]));
    assert_eq!(d["dead_letter_queue"], "jobs-dlq");
    let back = detail(&s, "jobs", &ids[0]).await;
    assert_eq!(back["state"], "available");
    assert_eq!(back["delivery_count"], 0);
    assert_eq!(back["last_error"], "bad 0", "a redrive keeps the history");
    assert_eq!(detail(&s, "jobs", &ids[1]).await["state"], "dead_lettered");

    let too_many: Vec<String> = (0..=100).map(|n| format!("qmsg_{n}")).collect();
    for (body, field) in [
        (json!({"message_ids": []}), "message_ids"),
        (json!({"message_ids": too_many}), "message_ids"),
        (json!({"message_ids": ["ok", ""]}), "message_ids[1]"),
        (
            json!({"message_ids": [ids[1]], "max_messages": 1}),
            "max_messages",
        ),
    ] {
        let r = s.post("/v1/queue/dlq/redrive/jobs", body.clone()).await;
        assert!(
            r.err(400, "INVALID_PARAMS").contains(field),
            "{body}: {}",
            r.body
        );
        assert!(r.body["error"]["hint"].is_string(), "{body}: {}", r.body);
    }
    assert_eq!(detail(&s, "jobs", &ids[1]).await["state"], "dead_lettered");
}
both!(redrive_chosen_dead_letters);

/// The new endpoint and fields are in discovery and the OpenAPI document.
#[tokio::test]
async fn cancel_and_the_new_fields_are_discovered_and_documented() {
    let s = TestServer::in_process(Backend::Sqlite).await;
    let d = s.get("/v1/discovery").await;
    let caps = d.ok().data()["capabilities"].as_array().unwrap().clone();
    assert!(
        caps.iter().any(|c| c["id"] == "queue.cancel"
            && c["method"] == "POST"
            && c["path"] == "/v1/queue/cancel"),
        "queue.cancel not in discovery"
    );
    let doc = serde_json::to_value(onceq_server::openapi::document()).unwrap();
    assert_eq!(
        doc["paths"]["/v1/queue/cancel"]["post"]["operationId"],
        "cancel"
    );
    let schemas = &doc["components"]["schemas"];
    assert!(schemas["Ack"]["properties"].get("result").is_some());
    assert!(
        schemas["Redrive"]["properties"]
            .get("message_ids")
            .is_some()
    );
    assert!(schemas["Redriven"]["properties"].get("not_found").is_some());
    assert!(
        schemas["QueueRecord"]["properties"]
            .get("completed_retention_seconds")
            .is_some()
    );
    assert!(
        schemas["CreateQueue"]["properties"]
            .get("completed_retention_seconds")
            .is_some()
    );
    assert!(
        schemas["UpdateQueue"]["properties"]
            .get("completed_retention_seconds")
            .is_some()
    );
    let outcomes = &schemas["AttemptOutcome"]["enum"];
    assert_eq!(
        outcomes,
        &json!([
            "acked",
            "nacked",
            "lease_expired",
            "push_failed",
            "dead_lettered",
            "cancelled"
        ])
    );
    let states = &schemas["MessageState"]["enum"];
    assert!(
        states.as_array().unwrap().contains(&json!("cancelled")),
        "{states}"
    );
}

/// The wait and run histograms and nacks by error, from what the claim and
/// the ack return, timed by the server's clock.
async fn wait_run_and_nack_metrics(b: Backend) {
    let s = TestServer::in_process(b).await;
    let id = s.publish("jobs", json!(1)).await;
    s.clock.advance(jiff::SignedDuration::from_secs(5));
    let item = consume_one(&s, "jobs").await;
    s.clock.advance(jiff::SignedDuration::from_secs(3));
    s.post(
        "/v1/queue/ack",
        json!({"queue": "jobs", "message_id": id, "receipt": item["receipt"]}),
    )
    .await
    .ok();
    for error in [Some("boom"), None, Some("again")] {
        let id = s.publish("jobs", json!(2)).await;
        let item = consume_one(&s, "jobs").await;
        assert_eq!(item["message_id"], id.as_str());
        // Dead-lettered, so the next consume takes the next new message.
        let mut body = json!({"queue": "jobs", "message_id": id, "receipt": item["receipt"],
                              "requeue": false});
        if let Some(error) = error {
            body["error"] = json!(error);
        }
        s.post("/v1/queue/nack", body).await.ok();
    }
    let m = s.scrape().await;
    let q = [("project", "alpha"), ("queue", "jobs")];
    assert_eq!(m.value("onceq_message_run_seconds_count", &q), 1.0);
    assert_eq!(m.value("onceq_message_run_seconds_sum", &q), 3.0);
    // The first hand-out of each of the four messages.
    assert_eq!(m.value("onceq_message_wait_seconds_count", &q), 4.0);
    assert_eq!(m.value("onceq_message_wait_seconds_sum", &q), 5.0);
    let nacks = |error| {
        m.value(
            "onceq_nacks_total",
            &[("project", "alpha"), ("queue", "jobs"), ("error", error)],
        )
    };
    assert_eq!((nacks("given"), nacks("none")), (2.0, 1.0));
}
both!(wait_run_and_nack_metrics);
