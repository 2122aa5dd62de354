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

/// A long poll on one server sees a publish made on another server sharing
/// the database at its next re-check of the store (`long_poll_recheck`,
/// 250 ms by default; docs/guarantees.md, "Long polling across servers
/// polls"): wake-ups are local to a process, so only the re-check can find
/// it. The publish is made once the poll has made its first (empty) claim:
/// the queue has a rate, so each claim writes the queue row's
/// `rate_refilled_at` (with the claiming server's clock), which the test
/// reads. Without re-checks the poll would find it only when its wait
/// ends, 20 s on.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_long_poll_sees_another_servers_publish_at_its_recheck() {
    let (handle, a, b) = TestServer::two_on_one_database(Default::default).await;
    assert_eq!(
        b.state.config.long_poll_recheck,
        std::time::Duration::from_millis(250)
    );
    // A rate far above what the test uses: it limits nothing here.
    a.post(
        "/v1/queue/create",
        json!({"name": "jobs", "rate_per_sec": 100000}),
    )
    .await
    .ok();
    let db = crate::harness::sql_client(handle.database_url.as_deref().unwrap()).await;
    let claimed_once = || async {
        db.query_one(
            "SELECT rate_refilled_at IS NOT NULL FROM onceq_queues WHERE project = 'alpha' AND name = 'jobs'",
            &[],
        )
        .await
        .unwrap()
        .get::<_, bool>(0)
    };
    assert!(!claimed_once().await);

    let http = b.http.clone();
    let (url, key) = (b.url("/v1/queue/consume"), a.key.clone());
    let poll = tokio::spawn(async move {
        post(
            &http,
            &url,
            &key,
            json!({"queue": "jobs", "wait_seconds": 20}),
        )
        .await
    });
    // Waits for an event (the poll's first claim), not for time to pass.
    let mut looks = 0;
    while !claimed_once().await {
        looks += 1;
        assert!(looks < 2000, "the long poll never claimed");
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert!(!poll.is_finished(), "the poll answered before the publish");
    let id = a.publish("jobs", json!("from a")).await;
    // Half the poll's wait: a poll that only looked again when its wait
    // ended (20 s) would answer with the message too, but too late.
    let got = tokio::time::timeout(std::time::Duration::from_secs(10), poll)
        .await
        .expect("the long poll did not see the other server's publish before its wait ended")
        .unwrap();
    let items = got["data"]["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "the poll ended without the message: {got}");
    assert_eq!(items[0]["message_id"], id.as_str());
}
