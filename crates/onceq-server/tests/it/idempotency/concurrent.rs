//! The call ledger under concurrency: racing calls with one key run once,
//! and two servers sharing one PostgreSQL database share the ledger.

use reqwest::Method;
use serde_json::json;

use super::call;
use crate::{
    both,
    harness::{Backend, TestServer},
};

async fn racing_calls_with_one_key_run_once(b: Backend) {
    let s = TestServer::in_process_with(b, crate::push::config()).await;
    s.post("/v1/queue/create", json!({"name": "jobs"}))
        .await
        .ok();
    let path = "/v1/queue/push_subscribe/jobs";
    let body = || Some(json!({"url": "https://hooks.example.com/a"}));
    let go = || call(&s, Method::POST, path, body(), "K");
    let (r1, r2, r3, r4) = tokio::join!(go(), go(), go(), go());
    let mut ids = Vec::new();
    for r in [r1, r2, r3, r4] {
        match r.status {
            200 => ids.push(r.data()["subscription_id"].clone()),
            409 => assert_eq!(r.body["error"]["code"], "REQUEST_IN_FLIGHT", "{}", r.body),
            _ => panic!("unexpected answer {}", r.body),
        }
    }
    assert!(!ids.is_empty());
    assert!(
        ids.windows(2).all(|w| w[0] == w[1]),
        "one subscription answered: {ids:?}"
    );
    let listed = s.get("/v1/queue/push_subscriptions/jobs").await;
    assert_eq!(
        listed.data()["items"].as_array().unwrap().len(),
        1,
        "made once"
    );
}
both!(racing_calls_with_one_key_run_once);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_on_one_database_share_the_ledger() {
    let (_db, a, b) = TestServer::two_on_one_database(Default::default).await;
    a.publish("orders", json!(1)).await;
    a.publish("orders", json!(2)).await;
    let path = "/v1/queue/purge/orders";
    let first = call(&a, Method::POST, path, None, "K").await;
    first.ok();
    a.publish("orders", json!(3)).await;
    // The retry lands on the other server (its own key, the same project).
    let again = call(&b, Method::POST, path, None, "K").await;
    again.ok();
    assert_eq!(again.body["metadata"]["idempotent_replay"], true);
    assert_eq!(again.data()["purged"], 2);
    assert_eq!(b.stats("orders").await["message_count"], 1);
}
