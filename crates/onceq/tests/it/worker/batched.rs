//! Batched acks (`WorkerConfig::batch_acks`, the default): a batch's acks
//! go out together, in the next consume or one `ack_batch`, never one call
//! per message; with `batch_acks: false` each message is acked alone, as
//! the seed's worker does. Both leave each job done once.

use serde_json::Value;

use super::support::{assert_each_job_done_once, env, publish, worker};
use crate::harness::Env;

/// Successful calls of `capability` so far, from the server's usage.
async fn calls(env: &Env, capability: &str) -> u64 {
    let usage: Value = reqwest::Client::new()
        .get(format!("{}/v1/account/usage", env.queue_url))
        .bearer_auth(&env.api_key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    usage["data"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["capability"] == capability)
        .map_or(0, |i| i["calls"].as_u64().unwrap())
}

fn facts(prefix: &str) -> Vec<String> {
    (0..10).map(|i| format!("export:{prefix}{i}")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_is_acked_in_one_call() {
    let (env, ctl) = env().await;
    let facts = facts("b");
    for fact in &facts {
        publish(&env, Some(fact), &format!("req-{fact}")).await;
    }
    // No flush by the linger: `run_once` sends its batch's acks itself.
    let w = worker(&env, &ctl, |c| {
        c.concurrency = 10;
        c.ack_linger = std::time::Duration::from_secs(3600);
    })
    .await;
    let t = w.drain().await.unwrap();
    assert_eq!((t.received, t.done, t.ack_lost), (10, 10, 0));
    assert_eq!(calls(&env, "queue.ack").await, 0, "no ack of its own");
    let batched = calls(&env, "queue.ack_batch").await;
    assert_eq!(batched, 1, "the ten acks in one ack_batch");
    let refs: Vec<&str> = facts.iter().map(String::as_str).collect();
    assert_each_job_done_once(&env, &refs).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_message_acks_when_asked() {
    let (env, ctl) = env().await;
    let facts = facts("p");
    for fact in &facts {
        publish(&env, Some(fact), &format!("req-{fact}")).await;
    }
    let w = worker(&env, &ctl, |c| {
        c.concurrency = 10;
        c.batch_acks = false;
    })
    .await;
    let t = w.drain().await.unwrap();
    assert_eq!((t.received, t.done, t.ack_lost), (10, 10, 0));
    assert_eq!(calls(&env, "queue.ack").await, 10);
    assert_eq!(calls(&env, "queue.ack_batch").await, 0);
    let refs: Vec<&str> = facts.iter().map(String::as_str).collect();
    assert_each_job_done_once(&env, &refs).await;
}

/// The long-running loop carries the acks in its next consume: one call
/// per batch, no `ack_batch` needed while work keeps coming.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loop_acks_in_its_next_consume() {
    let (env, ctl) = env().await;
    let facts = facts("l");
    for fact in &facts {
        publish(&env, Some(fact), &format!("req-{fact}")).await;
    }
    // One job at a time: each consume carries the previous job's ack.
    let w = worker(&env, &ctl, |c| {
        c.concurrency = 1;
        c.batch = 1;
        c.ack_linger = std::time::Duration::from_secs(3600);
    })
    .await;
    let stop = tokio_util::sync::CancellationToken::new();
    let run = tokio::spawn({
        let (w, stop) = (w.clone(), stop.clone());
        async move { w.run(stop).await }
    });
    // Each done job's ack rides on the next consume; the last one's with
    // the consume that finds the queue empty.
    let mut left = i64::MAX;
    for _ in 0..2000 {
        left = super::support::stats(&env).await.message_count;
        if left == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert_eq!(left, 0, "not all acked");
    stop.cancel();
    run.await.unwrap().unwrap();
    assert_eq!(w.metrics().done, 10);
    assert_eq!(calls(&env, "queue.ack").await, 0);
    assert_eq!(
        calls(&env, "queue.ack_batch").await,
        0,
        "every ack went with a consume"
    );
    let refs: Vec<&str> = facts.iter().map(String::as_str).collect();
    assert_each_job_done_once(&env, &refs).await;
}
