//! `ack_batch` and `consume` carrying the previous batch's acks: each ack
//! answered in SQS DeleteMessageBatch's shape, refusals naming the entry,
//! nothing acked by a refused call, acks committed before a long poll
//! waits, and the call ledger on `ack_batch`.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::{
    both,
    harness::{Backend, TestServer},
    idempotency::{in_flight, replays},
};

/// Consumes up to `max` from `queue`: the whole `data`.
async fn consume(s: &TestServer, body: Value) -> Value {
    let r = s.post("/v1/queue/consume", body).await;
    r.ok();
    r.data().clone()
}

async fn taken(s: &TestServer, queue: &str, n: usize) -> Vec<Value> {
    for i in 0..n {
        s.publish(queue, json!({"n": i})).await;
    }
    let got = consume(s, json!({"queue": queue, "max_messages": n})).await;
    got["items"].as_array().unwrap().clone()
}

fn entry(m: &Value) -> Value {
    json!({"message_id": m["message_id"], "receipt": m["receipt"]})
}

fn ids(list: &Value) -> Vec<Value> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|e| e["message_id"].clone())
        .collect()
}

async fn ack_batch_answers_each_entry(b: Backend) {
    let s = TestServer::in_process(b).await;
    let m = taken(&s, "q", 3).await;
    let wrong = json!({"message_id": m[1]["message_id"], "receipt": "rcpt_not_this_one"});
    let mut with_result = entry(&m[0]);
    with_result["result"] = json!({"rows": 3});
    let r = s
        .post(
            "/v1/queue/ack_batch",
            json!({"queue": "q", "entries": [with_result, wrong, entry(&m[2])]}),
        )
        .await;
    r.ok();
    let data = r.data();
    let keys: Vec<&String> = data.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["failed", "successful"], "{data}");
    assert_eq!(
        ids(&data["successful"]),
        [m[0]["message_id"].clone(), m[2]["message_id"].clone()]
    );
    assert_eq!(
        data["successful"][0],
        json!({"message_id": m[0]["message_id"]}),
        "an entry that succeeded carries its id only"
    );
    let failed = &data["failed"][0];
    assert_eq!(data["failed"].as_array().unwrap().len(), 1);
    assert_eq!(failed["message_id"], m[1]["message_id"]);
    assert_eq!(failed["code"], "LEASE_NOT_HELD");
    assert_eq!(failed["sender_fault"], true);
    assert!(failed["message"].as_str().unwrap().contains("receipt"));
    let stats = s.stats("q").await;
    assert_eq!(
        (&stats["message_count"], &stats["in_flight"]),
        (&json!(1), &json!(1))
    );
    // The same batch again: every entry fails, nothing else changes.
    let again = s
        .post(
            "/v1/queue/ack_batch",
            json!({"queue": "q", "entries": [entry(&m[0]), entry(&m[2])]}),
        )
        .await;
    assert_eq!(again.data()["successful"], json!([]));
    assert_eq!(again.data()["failed"].as_array().unwrap().len(), 2);
    // An unknown queue fails every entry, as an ack there answers false.
    let unknown = s
        .post(
            "/v1/queue/ack_batch",
            json!({"queue": "nope", "entries": [entry(&m[1])]}),
        )
        .await;
    assert_eq!(ids(&unknown.data()["failed"]), [m[1]["message_id"].clone()]);
    assert_eq!(s.stats("q").await["in_flight"], 1);
}
both!(ack_batch_answers_each_entry);

async fn ack_batch_refuses_bad_entries_and_acks_nothing(b: Backend) {
    let s = TestServer::in_process(b).await;
    let m = taken(&s, "q", 2).await;
    let refused = |body: Value, status: u16, code: &'static str| {
        let s = &s;
        async move { s.post("/v1/queue/ack_batch", body).await.err(status, code) }
    };
    let msg = refused(json!({"queue": "q", "entries": []}), 400, "INVALID_PARAMS").await;
    assert!(msg.contains("entries"), "{msg}");
    let msg = refused(json!({"queue": "q"}), 400, "INVALID_PARAMS").await;
    assert!(msg.contains("entries"), "{msg}");
    let eleven: Vec<Value> = (0..11).map(|_| entry(&m[0])).collect();
    let msg = refused(
        json!({"queue": "q", "entries": eleven}),
        400,
        "INVALID_PARAMS",
    )
    .await;
    assert!(msg.contains("entries") && msg.contains("10"), "{msg}");
    let twice = json!({"queue": "q", "entries": [entry(&m[0]), entry(&m[1]), entry(&m[0])]});
    let msg = refused(twice, 400, "INVALID_PARAMS").await;
    assert!(
        msg.contains("entries[2].message_id") && msg.contains("entries[0]"),
        "{msg}"
    );
    let no_receipt =
        json!({"queue": "q", "entries": [entry(&m[0]), {"message_id": m[1]["message_id"]}]});
    let msg = refused(no_receipt, 400, "INVALID_PARAMS").await;
    assert!(msg.contains("entries[1].receipt"), "{msg}");
    let mut big = entry(&m[1]);
    big["result"] = json!("x".repeat(70 * 1024));
    let too_big = json!({"queue": "q", "entries": [entry(&m[0]), big]});
    let msg = refused(too_big, 413, "QUEUE_MESSAGE_TOO_LARGE").await;
    assert!(msg.contains("entries[1].result"), "{msg}");
    assert_eq!(
        s.stats("q").await["in_flight"],
        2,
        "a refused batch acks none of its entries"
    );
}
both!(ack_batch_refuses_bad_entries_and_acks_nothing);

async fn ack_batch_honours_idempotency_key(b: Backend) {
    let s = TestServer::in_process(b).await;
    let m = taken(&s, "q", 3).await;
    let body = json!({"queue": "q", "entries": [entry(&m[0])]});
    let other = json!({"queue": "q", "entries": [entry(&m[1])]});
    let first = replays(
        &s,
        Method::POST,
        "/v1/queue/ack_batch",
        Some(body),
        ("/v1/queue/ack_batch", Some(other)),
    )
    .await;
    assert_eq!(
        ids(&first["successful"]),
        [m[0]["message_id"].clone()],
        "a retried batch says what the first said"
    );
    assert_eq!(
        s.stats("q").await["in_flight"],
        2,
        "the refused reuse acked nothing"
    );
    let r = in_flight(
        &s,
        "queue.ack_batch",
        Method::POST,
        "/v1/queue/ack_batch",
        Some(json!({"queue": "q", "entries": [entry(&m[2])]})),
    )
    .await;
    assert_eq!(ids(&r.data()["successful"]), [m[2]["message_id"].clone()]);
}
both!(ack_batch_honours_idempotency_key);

async fn consume_carries_the_previous_batchs_acks(b: Backend) {
    let s = TestServer::in_process(b).await;
    let first = taken(&s, "q", 2).await;
    for i in 2..4 {
        s.publish("q", json!({"n": i})).await;
    }
    let wrong = json!({"message_id": first[1]["message_id"], "receipt": "rcpt_not_this_one"});
    let next = consume(
        &s,
        json!({"queue": "q", "max_messages": 10, "acks": [entry(&first[0]), wrong]}),
    )
    .await;
    assert_eq!(
        ids(&next["acks"]["successful"]),
        [first[0]["message_id"].clone()]
    );
    assert_eq!(
        ids(&next["acks"]["failed"]),
        [first[1]["message_id"].clone()]
    );
    assert_eq!(next["acks"]["failed"][0]["code"], "LEASE_NOT_HELD");
    let items = next["items"].as_array().unwrap();
    assert_eq!(
        items
            .iter()
            .map(|m| m["payload"]["n"].clone())
            .collect::<Vec<_>>(),
        [json!(2), json!(3)],
        "the claim hands out the rest"
    );
    let stats = s.stats("q").await;
    assert_eq!(
        (&stats["message_count"], &stats["in_flight"]),
        (&json!(3), &json!(3))
    );
    // The last batch's acks with nothing left to hand out.
    let acks: Vec<Value> = items.iter().map(entry).collect();
    let last = consume(&s, json!({"queue": "q", "acks": acks})).await;
    assert_eq!(last["items"], json!([]));
    assert_eq!(last["acks"]["successful"].as_array().unwrap().len(), 2);
    // Without acks the answer is as it always was.
    let plain = consume(&s, json!({"queue": "q"})).await;
    assert!(plain.get("acks").is_none(), "{plain}");
    assert_eq!(s.stats("q").await["message_count"], 1);
}
both!(consume_carries_the_previous_batchs_acks);

async fn consume_refuses_bad_acks_and_claims_nothing(b: Backend) {
    let s = TestServer::in_process(b).await;
    let m = taken(&s, "q", 1).await;
    s.publish("q", json!("waiting")).await;
    let twice = json!({"queue": "q", "acks": [entry(&m[0]), entry(&m[0])]});
    let msg = s
        .post("/v1/queue/consume", twice)
        .await
        .err(400, "INVALID_PARAMS");
    assert!(msg.contains("acks[1].message_id"), "{msg}");
    let eleven: Vec<Value> = (0..11).map(|_| entry(&m[0])).collect();
    let msg = s
        .post("/v1/queue/consume", json!({"queue": "q", "acks": eleven}))
        .await
        .err(400, "INVALID_PARAMS");
    assert!(msg.contains("acks"), "{msg}");
    let stats = s.stats("q").await;
    assert_eq!(
        (&stats["available"], &stats["in_flight"]),
        (&json!(1), &json!(1)),
        "nothing acked, nothing claimed"
    );
}
both!(consume_refuses_bad_acks_and_claims_nothing);

/// A long poll's acks are committed before it waits: another caller sees
/// the message gone while the poll is still waiting for work.
async fn consume_commits_its_acks_before_the_long_poll_waits(b: Backend) {
    let s = TestServer::in_process(b).await;
    let m = taken(&s, "q", 1).await;
    let body = json!({"queue": "q", "wait_seconds": 20, "acks": [entry(&m[0])]});
    let waiter = crate::consume::long_poll_with(&s, body);
    let mut gone = false;
    for _ in 0..1000 {
        if s.stats("q").await["message_count"] == 0 {
            gone = true;
            break;
        }
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(gone, "the ack was not committed while the poll waited");
    assert!(!waiter.is_finished(), "the poll waits for work");
    s.publish("q", json!("wake")).await;
    let got = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .expect("long poll did not return after a publish")
        .unwrap();
    assert_eq!(got["data"]["items"][0]["payload"], "wake");
    assert_eq!(
        ids(&got["data"]["acks"]["successful"]),
        [m[0]["message_id"].clone()]
    );
}
both!(consume_commits_its_acks_before_the_long_poll_waits);
