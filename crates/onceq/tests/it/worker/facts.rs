//! What a job is called, and work published twice.

use std::collections::BTreeSet;

use onceq::types::request::BatchItem;
use serde_json::json;

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fact_from_payload_then_key_then_message_id() {
    let (env, ctl) = env().await;
    publish(&env, Some("export:from-payload"), "key-ignored").await;
    publish(&env, None, "key-used").await;
    // A publish without any key (the client's `publish` always sends one).
    let item = BatchItem {
        payload: Some(serde_json::value::to_raw_value(&json!({"tenant": "acme"})).unwrap()),
        ..Default::default()
    };
    let keyless = env.client().publish_batch(QUEUE, vec![item]).await.unwrap();
    let message_id = keyless[0].message_id.clone();

    let t = worker(&env, &ctl, |_| {}).await.drain().await.unwrap();
    assert_eq!(t.done, 3);
    let db = env.pool.get().await.unwrap();
    let facts: BTreeSet<String> = db
        .query("SELECT fact FROM onceq_job_facts WHERE state = 'done'", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let expected = ["export:from-payload", "key-used", message_id.as_str()];
    assert_eq!(facts, expected.iter().map(|s| s.to_string()).collect());
    assert_each_job_done_once(&env, &expected).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicate_messages_with_same_fact_do_the_work_once() {
    let (env, ctl) = env().await;
    // A retried request that made a second message (another publish key)
    // for the same work.
    publish(&env, Some("export:twice"), "attempt-1").await;
    publish(&env, Some("export:twice"), "attempt-2").await;
    assert_eq!(stats(&env).await.message_count, 2);

    let w = worker(&env, &ctl, |_| {}).await;
    let t = w.drain().await.unwrap();
    // Handled together, the second waits for the first; one after the
    // other, the second is a duplicate.
    assert_eq!((t.received, t.done, t.duplicates + t.deferred), (2, 1, 1));

    env.advance(61).await;
    let rest = w.drain().await.unwrap();
    assert_eq!(rest.done, 0);
    assert_eq!(rest.duplicates, t.deferred);
    assert_each_job_done_once(&env, &["export:twice"]).await;
}
