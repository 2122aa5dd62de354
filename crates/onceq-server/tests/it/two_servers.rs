//! Two servers on one PostgreSQL database never hand the same message to
//! two consumers at once, and lose none.

use std::collections::HashSet;

use serde_json::json;

use crate::harness::TestServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_servers_share_one_database_without_double_delivery() {
    let (_handle, a, b) = TestServer::two_on_one_database(Default::default).await;

    const N: usize = 400;
    let batches: Vec<_> = (0..N / 10)
        .map(|i| json!({"queue": "jobs", "messages": (0..10).map(|j| json!({"payload": i * 10 + j})).collect::<Vec<_>>()}))
        .collect();
    for (i, batch) in batches.into_iter().enumerate() {
        let s = if i % 2 == 0 { &a } else { &b };
        s.post("/v1/queue/publish_batch", batch).await.ok();
    }

    // 8 consumers, half on each server, with the same project key on both
    // (keys live in the shared database)
    let mut tasks = Vec::new();
    for c in 0..8 {
        let server = if c % 2 == 0 { &a } else { &b };
        let http = server.http.clone();
        let consume = server.url("/v1/queue/consume");
        let ack = server.url("/v1/queue/ack");
        let key = a.key.clone();
        tasks.push(tokio::spawn(async move {
            let mut seen = Vec::new();
            loop {
                let r = post(&http, &consume, &key, json!({"queue": "jobs", "max_messages": 10, "visibility_timeout": 300})).await;
                let items = r["data"]["items"].as_array().unwrap().clone();
                if items.is_empty() {
                    return seen;
                }
                for m in items {
                    seen.push(m["message_id"].as_str().unwrap().to_owned());
                    let r = post(&http, &ack, &key, json!({"queue": "jobs", "message_id": m["message_id"], "receipt": m["receipt"]})).await;
                    assert_eq!(r["data"]["acked"], true);
                }
            }
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    let unique: HashSet<_> = all.iter().collect();
    assert_eq!(unique.len(), all.len(), "a message was handed out twice");
    assert_eq!(all.len(), N, "a message was lost");
    assert_eq!(a.stats("jobs").await["message_count"], 0);
}

/// One call to a server over its own HTTP (the consumers run in tasks, off
/// the harness): the answer's JSON.
async fn post(
    http: &reqwest::Client,
    url: &str,
    key: &str,
    body: serde_json::Value,
) -> serde_json::Value {
    http.post(url)
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}
