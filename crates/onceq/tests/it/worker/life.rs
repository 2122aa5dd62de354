//! What the worker tells the server of a job's end: the handler's error
//! with its nack (the message's `last_error` and attempt), and the result
//! it set with its ack (kept where the queue retains completed messages).

use onceq::types::{MessageState, request::CreateQueue};

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_job_nacks_with_the_handlers_error() {
    let (env, ctl) = env().await;
    let id = publish(&env, Some("export:broken"), "k-broken").await;
    ctl.fail("export:broken");
    let w = worker(&env, &ctl, |_| {}).await;
    let t = w.run_once().await.unwrap();
    assert_eq!(t.failed, 1);
    let m = env.client().get_message(QUEUE, &id).await.unwrap();
    assert_eq!(m.last_error.as_deref(), Some("export export:broken failed"));
    assert_eq!(m.attempts.len(), 1);
    assert_eq!(
        m.attempts[0].error.as_deref(),
        Some("export export:broken failed")
    );

    ctl.heal("export:broken");
    w.drain().await.unwrap();
    assert_each_job_done_once(&env, &["export:broken"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_done_job_acks_with_the_result_it_set() {
    let (env, ctl) = env().await;
    env.client()
        .create_queue(&CreateQueue {
            name: Some(QUEUE.into()),
            completed_retention_seconds: Some(600),
            ..Default::default()
        })
        .await
        .unwrap();
    let id = publish(&env, Some("export:kept"), "k-kept").await;
    let t = worker(&env, &ctl, |_| {}).await.drain().await.unwrap();
    assert_eq!(t.done, 1);
    let m = env.client().get_message(QUEUE, &id).await.unwrap();
    assert_eq!(m.state, MessageState::Completed);
    let result: serde_json::Value = serde_json::from_str(m.result.unwrap().get()).unwrap();
    assert_eq!(result, serde_json::json!({"exported": "export:kept"}));
    assert_each_job_done_once(&env, &["export:kept"]).await;
}
