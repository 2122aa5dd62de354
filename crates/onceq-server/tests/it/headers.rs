//! Message headers (queue-api-2.md §3) over HTTP: validated on publish and
//! publish_batch (400 naming the entry, 413 with the payload, nothing
//! stored), names lower-cased, and returned unchanged in the publish
//! answer, consume items, dead letters and push deliveries.

use serde_json::{Value, json};

use crate::push::receiver::{Answer, Receiver};
use crate::push::{config, jobs_subscribed};
use crate::{
    both,
    harness::{Backend, TestServer},
};

const TRACEPARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

fn sent() -> Value {
    json!({"TraceParent": TRACEPARENT, "x-tenant": "acme", "Empty": ""})
}

fn stored() -> Value {
    json!({"traceparent": TRACEPARENT, "x-tenant": "acme", "empty": ""})
}

async fn headers_come_back_wherever_the_message_is(b: Backend) {
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
            json!({"queue": "jobs", "payload": {"n": 1}, "headers": sent()}),
        )
        .await;
    assert_eq!(r.ok().data()["headers"], stored());
    s.publish("jobs", json!({"n": 2})).await;

    let r = s
        .post(
            "/v1/queue/consume",
            json!({"queue": "jobs", "max_messages": 10}),
        )
        .await;
    let items = r.ok().data()["items"].as_array().unwrap().clone();
    assert_eq!(items[0]["headers"], stored());
    assert_eq!(
        items[1]["headers"],
        json!({}),
        "always present, empty when none"
    );

    // Dead-lettered, it keeps them.
    let nack = json!({"queue": "jobs", "message_id": items[0]["message_id"], "requeue": false});
    s.post("/v1/queue/nack", nack).await.ok();
    let r = s
        .post("/v1/queue/consume", json!({"queue": "jobs-dlq"}))
        .await;
    assert_eq!(r.ok().data()["items"][0]["headers"], stored());
}
both!(headers_come_back_wherever_the_message_is);

async fn batch_items_carry_their_own_headers(b: Backend) {
    let s = TestServer::in_process(b).await;
    let r = s
        .post(
            "/v1/queue/publish_batch",
            json!({"queue": "jobs", "messages": [
                {"payload": 1, "headers": {"A": "1"}},
                {"payload": 2},
                {"payload": 3, "headers": {"b": "2"}, "idempotency_key": "k3"},
            ]}),
        )
        .await;
    let items = r.ok().data()["items"].as_array().unwrap().clone();
    let answered: Vec<&Value> = items.iter().map(|i| &i["headers"]).collect();
    assert_eq!(
        answered,
        [&json!({"a": "1"}), &json!({}), &json!({"b": "2"})]
    );
    let r = s
        .post(
            "/v1/queue/consume",
            json!({"queue": "jobs", "max_messages": 10}),
        )
        .await;
    let consumed: Vec<Value> = r.ok().data()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["headers"].clone())
        .collect();
    assert_eq!(consumed, [json!({"a": "1"}), json!({}), json!({"b": "2"})]);
}
both!(batch_items_carry_their_own_headers);

async fn bad_headers_are_refused_and_nothing_is_stored(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.post("/v1/queue/create", json!({"name": "jobs"}))
        .await
        .ok();
    let long_value = "v".repeat(4097);
    let long_name = "n".repeat(129);
    let many: serde_json::Map<String, Value> =
        (0..65).map(|i| (format!("h{i}"), json!("v"))).collect();
    let cases = [
        (
            json!(["a"]),
            "headers must be an object of string values (got an array)",
        ),
        (
            json!("a=b"),
            "headers must be an object of string values (got a string)",
        ),
        (json!({"n": 1}), "headers.n must be a string (got a number)"),
        (json!({"x": null}), "headers.x must be a string (got null)"),
        (
            json!({"bad name": "v"}),
            "headers has an invalid name \"bad name\"",
        ),
        (json!({"": "v"}), "headers has an invalid name \"\""),
        (json!({long_name: "v"}), "invalid name"),
        (json!({"a": long_value}), "headers.a is 4097 bytes"),
        (Value::Object(many), "headers holds 65 entries; at most 64"),
        (json!({"X-A": "1", "x-a": "2"}), "headers names `x-a` twice"),
    ];
    for (headers, want) in cases {
        let r = s
            .post(
                "/v1/queue/publish",
                json!({"queue": "jobs", "payload": 1, "headers": headers}),
            )
            .await;
        let message = r.err(400, "INVALID_PARAMS");
        assert!(message.contains(want), "{headers}: {message}");
    }
    // In a batch, the item is named, and no item is stored.
    let r = s
        .post(
            "/v1/queue/publish_batch",
            json!({"queue": "jobs", "messages": [
                {"payload": 1, "headers": {"ok": "1"}},
                {"payload": 2, "headers": {"n": 2}},
            ]}),
        )
        .await;
    let message = r.err(400, "INVALID_PARAMS");
    assert!(
        message.contains("messages[1].headers.n must be a string"),
        "{message}"
    );
    // A duplicate name in the raw JSON is ambiguous: refused too.
    let r = s
        .post_raw(
            "/v1/queue/publish",
            r#"{"queue":"jobs","payload":1,"headers":{"a":"1","a":"2"}}"#,
        )
        .await;
    assert!(r.err(400, "INVALID_PARAMS").contains("headers"));

    // Headers count toward the 256 KiB message limit.
    let payload = "p".repeat(262_144 - 100);
    let fits = json!({"queue": "jobs", "payload": payload, "headers": {"a": "b"}});
    s.post("/v1/queue/publish", fits).await.ok();
    let big = json!({"queue": "jobs", "payload": payload, "headers": {"a": "b".repeat(200)}});
    let message = s
        .post("/v1/queue/publish", big)
        .await
        .err(413, "QUEUE_MESSAGE_TOO_LARGE");
    assert!(message.contains("payload and headers are"), "{message}");

    assert_eq!(
        s.stats("jobs").await["message_count"],
        1,
        "only the one that fit"
    );
}
both!(bad_headers_are_refused_and_nothing_is_stored);

async fn push_deliveries_carry_the_headers(b: Backend) {
    let s = TestServer::start_with(b, config()).await;
    let hook = Receiver::start([], Answer::Status(204)).await;
    jobs_subscribed(&s, &hook.url("/hook"), json!({})).await;
    s.post(
        "/v1/queue/publish",
        json!({"queue": "jobs", "payload": {"n": 1}, "headers": sent()}),
    )
    .await
    .ok();
    let seen = hook.wait_for(1).await;
    assert_eq!(seen[0].json()["headers"], stored());
}
both!(push_deliveries_carry_the_headers);
