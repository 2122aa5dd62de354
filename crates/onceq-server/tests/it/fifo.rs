//! FIFO queues over HTTP: create, publish with `message_group_id`, consume
//! order, at most one message per group in flight, and 8 concurrent
//! consumers with random nacks.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::{
    both,
    harness::{Backend, TestServer},
};

async fn consume(s: &TestServer, queue: &str, max: i64) -> Vec<Value> {
    let r = s
        .post(
            "/v1/queue/consume",
            json!({"queue": queue, "max_messages": max}),
        )
        .await;
    r.ok();
    r.data()["items"].as_array().unwrap().clone()
}

fn payloads(items: &[Value]) -> Vec<Value> {
    items.iter().map(|m| m["payload"].clone()).collect()
}

async fn ack(s: &TestServer, queue: &str, m: &Value) {
    let r = s
        .post(
            "/v1/queue/ack",
            json!({"queue": queue, "message_id": m["message_id"], "receipt": m["receipt"]}),
        )
        .await;
    r.ok();
    assert_eq!(r.data()["acked"], true, "{}", r.body);
}

async fn create_fifo_and_publish_groups(b: Backend) {
    let s = TestServer::in_process(b).await;
    let r = s
        .post(
            "/v1/queue/create",
            json!({"name": "orders", "type": "fifo"}),
        )
        .await;
    r.ok();
    assert_eq!(r.data()["type"], "fifo");
    assert_eq!(r.data()["dead_letter_queue"], "orders-dlq");
    let dlq = s.get("/v1/queue/get/orders-dlq").await;
    assert_eq!(dlq.data()["type"], "standard");
    let got = s.get("/v1/queue/get/orders").await;
    assert_eq!(got.data()["type"], "fifo");

    // A FIFO queue cannot be a dead-letter queue.
    s.post(
        "/v1/queue/create",
        json!({"name": "jobs", "dead_letter_queue": "orders"}),
    )
    .await
    .err(400, "INVALID_PARAMS");

    for (group, n) in [("a", 0), ("a", 1), ("b", 0)] {
        s.post(
            "/v1/queue/publish",
            json!({"queue": "orders", "payload": {"g": group, "n": n}, "message_group_id": group}),
        )
        .await
        .ok();
    }
    s.post(
        "/v1/queue/publish_batch",
        json!({"queue": "orders", "messages": [
            {"payload": {"g": "b", "n": 1}, "message_group_id": "b"},
            {"payload": {"g": "default", "n": 0}},
            {"payload": {"g": "default", "n": 1}, "message_group_id": "default"},
        ]}),
    )
    .await
    .ok();

    // Each group's head, oldest first; then nothing while they are held.
    let first = consume(&s, "orders", 10).await;
    assert_eq!(
        payloads(&first),
        vec![
            json!({"g": "a", "n": 0}),
            json!({"g": "b", "n": 0}),
            json!({"g": "default", "n": 0}),
        ]
    );
    assert!(consume(&s, "orders", 10).await.is_empty());
    let stats = s.stats("orders").await;
    assert_eq!(
        (stats["in_flight"].clone(), stats["available"].clone()),
        (json!(3), json!(3))
    );

    // A nack puts the head back first; an ack lets the group move on.
    let r = s
        .post(
            "/v1/queue/nack",
            json!({"queue": "orders", "message_id": first[0]["message_id"], "receipt": first[0]["receipt"]}),
        )
        .await;
    assert_eq!(r.data()["requeued"], true);
    let again = consume(&s, "orders", 10).await;
    assert_eq!(payloads(&again), vec![json!({"g": "a", "n": 0})]);
    assert_eq!(again[0]["delivery_count"], 2);
    ack(&s, "orders", &again[0]).await;
    ack(&s, "orders", &first[1]).await;
    let next = consume(&s, "orders", 10).await;
    assert_eq!(
        payloads(&next),
        vec![json!({"g": "a", "n": 1}), json!({"g": "b", "n": 1})]
    );
}
both!(create_fifo_and_publish_groups);

async fn standard_queue_ignores_message_group_id(b: Backend) {
    let s = TestServer::in_process(b).await;
    for n in 0..3 {
        s.post(
            "/v1/queue/publish",
            json!({"queue": "jobs", "payload": n, "message_group_id": "a"}),
        )
        .await
        .ok();
    }
    assert_eq!(consume(&s, "jobs", 10).await.len(), 3);
}
both!(standard_queue_ignores_message_group_id);

/// 8 consumers over HTTP, each looping consume → random nack (30 %) or ack,
/// on 3 groups × 10 messages: no group ever has two messages in flight, and
/// every group is acked in publish order.
async fn eight_consumers_with_random_nacks_keep_order(b: Backend) {
    const GROUPS: usize = 3;
    const EACH: usize = 10;
    let s = Arc::new(TestServer::in_process(b).await);
    s.post(
        "/v1/queue/create",
        json!({"name": "orders", "type": "fifo", "max_retries": 1000}),
    )
    .await
    .ok();
    for n in 0..EACH {
        let messages: Vec<Value> = (0..GROUPS)
            .map(|g| json!({"payload": {"g": g, "n": n}, "message_group_id": format!("g{g}")}))
            .collect();
        s.publish_batch("orders", &messages).await;
    }

    #[derive(Default)]
    struct Ledger {
        in_flight: HashMap<u64, String>,
        acked: HashMap<u64, Vec<u64>>,
        acks: usize,
    }
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let mut consumers = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let (s, ledger) = (s.clone(), ledger.clone());
        consumers.spawn(async move {
            let mut idle = 0;
            while ledger.lock().unwrap().acks < GROUPS * EACH {
                let items = consume(&s, "orders", 2).await;
                if items.is_empty() {
                    idle += 1;
                    assert!(idle < 20_000, "consumers starved");
                    tokio::task::yield_now().await;
                    continue;
                }
                for m in &items {
                    let g = m["payload"]["g"].as_u64().unwrap();
                    let id = m["message_id"].as_str().unwrap().to_owned();
                    if let Some(other) = ledger.lock().unwrap().in_flight.insert(g, id.clone()) {
                        panic!("group {g}: {id} handed out while {other} is in flight");
                    }
                }
                for m in items {
                    let g = m["payload"]["g"].as_u64().unwrap();
                    let nack = rand::random::<u8>() % 10 < 3;
                    {
                        // Cleared before the call: once it is sent, the
                        // server may hand out the group's next message.
                        let mut l = ledger.lock().unwrap();
                        l.in_flight.remove(&g);
                        if !nack {
                            l.acks += 1;
                            let n = m["payload"]["n"].as_u64().unwrap();
                            l.acked.entry(g).or_default().push(n);
                        }
                    }
                    if nack {
                        let r = s
                            .post(
                                "/v1/queue/nack",
                                json!({"queue": "orders", "message_id": m["message_id"], "receipt": m["receipt"]}),
                            )
                            .await;
                        assert_eq!(r.data()["requeued"], true, "{}", r.body);
                    } else {
                        ack(&s, "orders", &m).await;
                    }
                }
            }
        });
    }
    consumers.join_all().await;
    let ledger = ledger.lock().unwrap();
    for g in 0..GROUPS as u64 {
        let want: Vec<u64> = (0..EACH as u64).collect();
        assert_eq!(ledger.acked[&g], want, "group {g} acked in publish order");
    }
}
both!(eight_consumers_with_random_nacks_keep_order);
