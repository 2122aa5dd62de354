//! publish and publish_batch: dedupe, replay flag, cost, limits, bad input.

use serde_json::json;

use crate::{
    both,
    harness::{Backend, TestServer},
};

async fn publish_answers_the_message(b: Backend) {
    let s = TestServer::in_process(b).await;
    let r = s
        .post(
            "/v1/queue/publish",
            json!({"queue": "api-enqueue-jobs", "payload": {"job": "export", "tenant": "acme"}}),
        )
        .await;
    r.ok();
    let d = r.data();
    assert!(d["message_id"].as_str().unwrap().starts_with("qmsg_"));
    assert_eq!(d["queue"], "api-enqueue-jobs");
    assert_eq!(d["payload"], json!({"job": "export", "tenant": "acme"}));
    assert_eq!(d["status"], "available");
    assert_eq!(d["delivery_count"], 0);
    assert!(d["created_at"].is_string());
    // created by its first publish, with its DLQ
    let q = s.get("/v1/queue/get/api-enqueue-jobs").await;
    q.ok();
    assert_eq!(q.data()["dead_letter_queue"], "api-enqueue-jobs-dlq");
    s.get("/v1/queue/get/api-enqueue-jobs-dlq").await.ok();

    let r = s
        .post(
            "/v1/queue/publish",
            json!({"queue": "q", "payload": "x", "delay_seconds": 60}),
        )
        .await;
    assert_eq!(r.data()["status"], "delayed");
}
both!(publish_answers_the_message);

async fn same_key_is_one_message_replayed_free(b: Backend) {
    let s = TestServer::in_process_with(b, TestServer::priced()).await;
    let body = json!({"queue": "q", "payload": {"job": "export", "tenant": "acme"}, "idempotency_key": "req_probe_abc123"});
    let first = s.post("/v1/queue/publish", body.clone()).await;
    first.ok();
    assert_eq!(first.body["metadata"]["idempotent_replay"], false);
    assert_eq!(first.body["metadata"]["cost_usd"], 0.00002);
    // same payload, keys in another order: still the same payload
    let again = s
        .post("/v1/queue/publish", json!({"queue": "q", "payload": {"tenant": "acme", "job": "export"}, "idempotency_key": "req_probe_abc123"}))
        .await;
    again.ok();
    assert_eq!(again.data()["message_id"], first.data()["message_id"]);
    assert_eq!(again.body["metadata"]["idempotent_replay"], true);
    assert_eq!(again.body["metadata"]["cost_usd"], 0.0);
    assert_eq!(s.stats("q").await["message_count"], 1);

    // the key outlives the message: consume + ack, then publish again
    let c = s.post("/v1/queue/consume", json!({"queue": "q"})).await;
    let m = &c.data()["items"][0];
    let ack = s
        .post(
            "/v1/queue/ack",
            json!({"queue": "q", "message_id": m["message_id"], "receipt": m["receipt"]}),
        )
        .await;
    assert_eq!(ack.data()["acked"], true);
    let after = s.post("/v1/queue/publish", body).await;
    assert_eq!(after.data()["message_id"], first.data()["message_id"]);
    assert_eq!(after.body["metadata"]["idempotent_replay"], true);
    assert_eq!(after.data()["status"], "gone");
    assert_eq!(s.stats("q").await["message_count"], 0);
}
both!(same_key_is_one_message_replayed_free);

async fn reused_key_with_other_payload_is_422(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.post(
        "/v1/queue/publish",
        json!({"queue": "q", "payload": {"a": 1}, "idempotency_key": "k"}),
    )
    .await
    .ok();
    let r = s
        .post(
            "/v1/queue/publish",
            json!({"queue": "q", "payload": {"a": 2}, "idempotency_key": "k"}),
        )
        .await;
    let msg = r.err(422, "IDEMPOTENCY_KEY_REUSED");
    assert!(msg.contains("\"k\""), "{msg}");
    assert_eq!(r.body["error"]["retryable"], false);
    assert_eq!(s.stats("q").await["message_count"], 1);
}
both!(reused_key_with_other_payload_is_422);

async fn header_key_is_used_and_body_field_wins(b: Backend) {
    let s = TestServer::in_process(b).await;
    let send = |header: Option<&'static str>, body: serde_json::Value| {
        let mut req = s
            .http
            .post(s.url("/v1/queue/publish"))
            .bearer_auth(&s.key)
            .json(&body);
        if let Some(h) = header {
            req = req.header("Idempotency-Key", h);
        }
        async move {
            req.send()
                .await
                .unwrap()
                .json::<serde_json::Value>()
                .await
                .unwrap()
        }
    };
    let a = send(Some("hk"), json!({"queue": "q", "payload": 1})).await;
    let b2 = send(Some("hk"), json!({"queue": "q", "payload": 1})).await;
    assert_eq!(a["data"]["message_id"], b2["data"]["message_id"]);
    assert_eq!(b2["metadata"]["idempotent_replay"], true);
    // body key "bk" wins over header "hk": a new message
    let c = send(
        Some("hk"),
        json!({"queue": "q", "payload": 1, "idempotency_key": "bk"}),
    )
    .await;
    assert_ne!(c["data"]["message_id"], a["data"]["message_id"]);
    assert_eq!(c["metadata"]["idempotent_replay"], false);
    assert_eq!(s.stats("q").await["message_count"], 2);
    // a malformed header is refused even when the body's key wins
    // (schemathesis found it silently ignored)
    let long: &'static str = Box::leak("h".repeat(256).into_boxed_str());
    for body in [
        json!({"queue": "q", "payload": 1}),
        json!({"queue": "q", "payload": 1, "idempotency_key": "bk"}),
    ] {
        let r = send(Some(long), body).await;
        assert_eq!(r["error"]["code"], "INVALID_PARAMS", "{r}");
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains("Idempotency-Key header")
        );
    }
    assert_eq!(s.stats("q").await["message_count"], 2);
}
both!(header_key_is_used_and_body_field_wins);

async fn concurrent_same_key_publishes_store_one(b: Backend) {
    let s = TestServer::in_process(b).await;
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let http = s.http.clone();
        let url = s.url("/v1/queue/publish");
        let key = s.key.clone();
        tasks.push(tokio::spawn(async move {
            let r = http
                .post(url)
                .bearer_auth(key)
                .json(&json!({"queue": "q", "payload": {"x": 1}, "idempotency_key": "same"}))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200);
            let v: serde_json::Value = r.json().await.unwrap();
            (
                v["data"]["message_id"].as_str().unwrap().to_owned(),
                v["metadata"]["idempotent_replay"].as_bool().unwrap(),
            )
        }));
    }
    let mut ids = Vec::new();
    let mut fresh = 0;
    for t in tasks {
        let (id, replay) = t.await.unwrap();
        ids.push(id);
        fresh += usize::from(!replay);
    }
    ids.dedup();
    assert_eq!(ids.len(), 1, "all publishes must answer the same id");
    assert_eq!(fresh, 1, "exactly one publish stores");
    assert_eq!(s.stats("q").await["message_count"], 1);
}
both!(concurrent_same_key_publishes_store_one);

async fn oversized_payload_is_413_and_stores_nothing(b: Backend) {
    let s = TestServer::in_process(b).await;
    // exactly at the limit: {"s":"..."} is 8 bytes of overhead
    let at_limit = "x".repeat(262_144 - 8);
    s.post(
        "/v1/queue/publish",
        json!({"queue": "q", "payload": {"s": at_limit}}),
    )
    .await
    .ok();
    let over = "x".repeat(262_144 - 7);
    let r = s
        .post(
            "/v1/queue/publish",
            json!({"queue": "q", "payload": {"s": over}}),
        )
        .await;
    let msg = r.err(413, "QUEUE_MESSAGE_TOO_LARGE");
    assert!(msg.contains("262144"), "{msg}");
    assert_eq!(s.stats("q").await["message_count"], 1);
    // and on a queue that did not exist: not even the queue is created
    let r = s
        .post(
            "/v1/queue/publish",
            json!({"queue": "fresh", "payload": {"s": "y".repeat(300_000)}}),
        )
        .await;
    r.err(413, "QUEUE_MESSAGE_TOO_LARGE");
    s.get("/v1/queue/get/fresh")
        .await
        .err(404, "QUEUE_NOT_FOUND");
    // a body over the request limit (4 MiB) is refused as well
    let huge = format!(
        "{{\"queue\":\"q\",\"payload\":\"{}\"}}",
        "z".repeat(5 * 1024 * 1024)
    );
    s.post_raw("/v1/queue/publish", huge)
        .await
        .err(413, "QUEUE_MESSAGE_TOO_LARGE");
}
both!(oversized_payload_is_413_and_stores_nothing);

async fn bad_input_names_the_field(b: Backend) {
    let s = TestServer::in_process(b).await;
    let cases = [
        (json!({"payload": 1}), "queue"),
        (json!({"queue": "q"}), "payload"),
        (json!({"queue": "q", "payload": null}), "payload"),
        (json!({"queue": "bad name", "payload": 1}), "queue"),
        (json!({"queue": "-x", "payload": 1}), "queue"),
        (json!({"queue": "x".repeat(81), "payload": 1}), "queue"),
        (json!({"queue": 5, "payload": 1}), "queue"),
        (
            json!({"queue": "q", "payload": 1, "delay_seconds": -1}),
            "delay_seconds",
        ),
        (
            json!({"queue": "q", "payload": 1, "delay_seconds": 604_801}),
            "delay_seconds",
        ),
        (
            json!({"queue": "q", "payload": 1, "delay_seconds": "5"}),
            "delay_seconds",
        ),
        (
            json!({"queue": "q", "payload": 1, "priority": 1.5}),
            "priority",
        ),
        (
            json!({"queue": "q", "payload": 1, "priority": 3_000_000_000i64}),
            "priority",
        ),
        (
            json!({"queue": "q", "payload": 1, "idempotency_key": ""}),
            "idempotency_key",
        ),
        (
            json!({"queue": "q", "payload": 1, "idempotency_key": "k".repeat(10_000)}),
            "idempotency_key",
        ),
        (
            json!({"queue": "q", "payload": 1, "idempotency_key": "a\u{0}b"}),
            "idempotency_key",
        ),
        (
            json!({"queue": "q", "payload": 1, "idempotency_key": 7}),
            "idempotency_key",
        ),
    ];
    for (body, field) in cases {
        let r = s.post("/v1/queue/publish", body.clone()).await;
        let msg = r.err(400, "INVALID_PARAMS");
        assert!(
            msg.contains(field),
            "message for {body} should name {field}: {msg}"
        );
    }
    for raw in [
        "{",
        "not json",
        "[1,2]",
        "{\"queue\": \"q\", \"payload\": 1,}",
        "\u{0}",
        "{\"queue\":\"q\",\"payload\":1} junk",
        "{\"queue\":\"q\",\"payload\":1}{}",
    ] {
        s.post_raw("/v1/queue/publish", raw.to_owned())
            .await
            .err(400, "INVALID_PARAMS");
    }
    s.post_raw("/v1/queue/publish", vec![0xff, 0xfe, b'{'])
        .await
        .err(400, "INVALID_PARAMS");
    let deep = format!(
        "{{\"queue\":\"q\",\"payload\":{}1{}}}",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    s.post_raw("/v1/queue/publish", deep)
        .await
        .err(400, "INVALID_PARAMS");
    // unknown fields are ignored
    s.post(
        "/v1/queue/publish",
        json!({"queue": "q", "payload": 1, "colour": "blue"}),
    )
    .await
    .ok();
    // nothing but that last one was stored
    assert_eq!(s.stats("q").await["message_count"], 1);
}
both!(bad_input_names_the_field);

async fn batch_is_all_or_nothing(b: Backend) {
    let s = TestServer::in_process_with(b, TestServer::priced()).await;
    s.post(
        "/v1/queue/publish",
        json!({"queue": "q", "payload": "first", "idempotency_key": "k1"}),
    )
    .await
    .ok();
    let r = s
        .post(
            "/v1/queue/publish_batch",
            json!({"queue": "q", "messages": [
                {"payload": {"n": 1}, "idempotency_key": "fresh"},
                {"payload": {"n": 2}},
                {"payload": "other", "idempotency_key": "k1"},
            ]}),
        )
        .await;
    let msg = r.err(422, "IDEMPOTENCY_KEY_REUSED");
    assert!(msg.contains("message 2"), "{msg}");
    assert_eq!(s.stats("q").await["message_count"], 1);

    let r = s
        .post(
            "/v1/queue/publish_batch",
            json!({"queue": "q", "messages": [
                {"payload": {"n": 1}, "idempotency_key": "fresh"},
                {"payload": {"n": 2}, "priority": 5, "delay_seconds": 10},
                {"payload": "first", "idempotency_key": "k1"},
            ]}),
        )
        .await;
    r.ok();
    let items = r.data()["items"].as_array().unwrap();
    assert_eq!(items.len(), 3);
    assert_eq!(items[0]["idempotent_replay"], false);
    assert_eq!(items[1]["status"], "delayed");
    assert_eq!(items[2]["idempotent_replay"], true);
    assert_eq!(r.body["metadata"]["idempotent_replay"], false);
    assert_eq!(r.body["metadata"]["cost_usd"], 0.00004);
    assert_eq!(s.stats("q").await["message_count"], 3);

    let bad = [
        json!({"queue": "q", "messages": []}),
        json!({"queue": "q", "messages": (0..11).map(|i| json!({"payload": i})).collect::<Vec<_>>()}),
        json!({"queue": "q"}),
        json!({"queue": "q", "messages": [{"payload": 1}, {"payload": 2, "delay_seconds": -3}]}),
    ];
    for body in bad {
        let msg = s
            .post("/v1/queue/publish_batch", body)
            .await
            .err(400, "INVALID_PARAMS");
        assert!(msg.contains("messages"), "{msg}");
    }
    let r = s
        .post(
            "/v1/queue/publish_batch",
            json!({"queue": "q", "messages": [{"payload": 1}, {"payload": "y".repeat(262_145)}]}),
        )
        .await;
    r.err(413, "QUEUE_MESSAGE_TOO_LARGE");
    assert_eq!(s.stats("q").await["message_count"], 3);
}
both!(batch_is_all_or_nothing);

/// `--max-batch` raises the contract's 10 for onceq's own clients; past the
/// raised limit it is refused the same way.
async fn max_batch_can_be_raised(b: Backend) {
    let config = onceq_server::ServerConfig {
        max_batch: 100,
        ..onceq_server::ServerConfig::default()
    };
    let s = TestServer::in_process_with(b, config).await;
    let batch = |n: usize| json!({"queue": "q", "messages": (0..n).map(|i| json!({"payload": i})).collect::<Vec<_>>()});
    let r = s.post("/v1/queue/publish_batch", batch(100)).await;
    r.ok();
    assert_eq!(r.data()["items"].as_array().unwrap().len(), 100);
    let msg = s
        .post("/v1/queue/publish_batch", batch(101))
        .await
        .err(400, "INVALID_PARAMS");
    assert!(msg.contains("1 to 100"), "{msg}");
    assert_eq!(s.stats("q").await["message_count"], 100);
}
both!(max_batch_can_be_raised);
