//! The typed client over real HTTP: errors a caller can branch on, replays
//! it can see, and publish retries that keep their idempotency key.

use onceq::{Error, PublishOptions};
use serde_json::json;

use crate::harness::Env;

/// Options that publish under idempotency key `k`.
fn keyed(k: &str) -> PublishOptions {
    PublishOptions {
        idempotency_key: Some(k.into()),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publish_reports_replays_and_keeps_generated_keys() {
    let env = Env::start().await;
    let c = env.client();
    let first = c.publish("q", &json!({"a": 1}), keyed("k")).await.unwrap();
    assert!(!first.replay);
    let again = c.publish("q", &json!({"a": 1}), keyed("k")).await.unwrap();
    assert!(again.replay);
    assert_eq!(again.message.message_id, first.message.message_id);
    let generated = c
        .publish("q", &json!(2), PublishOptions::default())
        .await
        .unwrap();
    assert!(!generated.idempotency_key.is_empty());
    assert_eq!(c.stats("q").await.unwrap().message_count, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headers_travel_from_publish_to_consume() {
    let env = Env::start().await;
    let c = env.client();
    let headers: onceq::types::Headers = [("X-Tenant".to_owned(), "acme".to_owned())].into();
    let opts = PublishOptions {
        headers,
        ..Default::default()
    };
    let p = c.publish("q", &json!(1), opts).await.unwrap();
    assert_eq!(
        p.message.headers.get("x-tenant").map(String::as_str),
        Some("acme")
    );
    let got = c.consume("q", Default::default()).await.unwrap();
    assert_eq!(
        got[0].headers.get("x-tenant").map(String::as_str),
        Some("acme")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_are_variants() {
    let env = Env::start().await;
    let c = env.client();
    c.publish("q", &json!(1), keyed("k")).await.unwrap();
    assert!(matches!(
        c.publish("q", &json!(2), keyed("k")).await,
        Err(Error::KeyReused(_))
    ));
    let big = "x".repeat(300_000);
    assert!(matches!(
        c.publish("q", &big, keyed("big")).await,
        Err(Error::MessageTooLarge(_))
    ));
    assert!(matches!(
        c.stats("missing").await,
        Err(Error::QueueNotFound(_))
    ));
    let bad = onceq::Client::new(&env.queue_url, "wrong").unwrap();
    assert!(matches!(
        bad.list_queues().await,
        Err(Error::Unauthorized(_))
    ));
    assert!(matches!(
        c.consume(
            "q",
            onceq::ConsumeOptions {
                max_messages: 11,
                ..Default::default()
            }
        )
        .await,
        Err(Error::InvalidParams(_))
    ));
    // a server that is not there: a transport error, transient
    let gone = onceq::Client::new("http://127.0.0.1:9", "k")
        .unwrap()
        .with_retry(onceq::RetryPolicy::none());
    let err = gone
        .publish("q", &json!(1), PublishOptions::default())
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::Transport(_)) && err.is_transient(),
        "{err:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whole_api_round_trip() {
    let env = Env::start().await;
    let c = env.client();
    let q = c
        .create_queue(&onceq::types::request::CreateQueue {
            name: Some("jobs".into()),
            max_retries: Some(0),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(q.dead_letter_queue.as_deref(), Some("jobs-dlq"));
    assert_eq!(c.get_queue("jobs").await.unwrap().max_retries, 0);
    assert_eq!(c.list_queues().await.unwrap().len(), 2);
    let items = (0..3)
        .map(|i| onceq::types::request::BatchItem {
            payload: Some(serde_json::value::to_raw_value(&i).unwrap()),
            ..Default::default()
        })
        .collect();
    assert_eq!(c.publish_batch("jobs", items).await.unwrap().len(), 3);
    let got = c
        .consume(
            "jobs",
            onceq::ConsumeOptions {
                max_messages: 3,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(got.len(), 3);
    assert!(
        c.ack("jobs", &got[0].message_id, Some(&got[0].receipt))
            .await
            .unwrap()
    );
    let ext = c
        .extend("jobs", &got[1].message_id, Some(&got[1].receipt), 60)
        .await
        .unwrap();
    assert!(ext.extended);
    let n = c
        .nack(
            "jobs",
            &got[1].message_id,
            onceq::NackOptions {
                receipt: Some(got[1].receipt.clone()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(
        n.dead_lettered,
        "max_retries 0: the first failure dead-letters"
    );
    assert_eq!(c.redrive("jobs", None).await.unwrap().redriven, 1);
    assert_eq!(c.purge("jobs").await.unwrap(), 2);
    assert!(c.delete_queue("jobs").await.unwrap().deleted);
    assert!(c.discovery().await.unwrap().capabilities.len() > 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update_queue_and_get_message() {
    let env = Env::start().await;
    let c = env.client();
    let p = c
        .publish("jobs", &json!({"n": 1}), keyed("k-1"))
        .await
        .unwrap();
    let q = c
        .update_queue(&onceq::types::request::UpdateQueue {
            name: Some("jobs".into()),
            max_retries: Some(0),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!((q.name.as_str(), q.max_retries), ("jobs", 0));
    let m = c.get_message("jobs", &p.message.message_id).await.unwrap();
    assert_eq!(m.state, onceq::types::MessageState::Available);
    assert_eq!(m.idempotency_key.as_deref(), Some("k-1"));
    assert_eq!(
        m.payload
            .as_deref()
            .map(serde_json::value::RawValue::get)
            .unwrap(),
        r#"{"n":1}"#
    );
    let err = c.get_message("jobs", "qmsg_nope").await.unwrap_err();
    assert!(matches!(err, Error::MessageNotFound(_)), "{err:?}");
    assert_eq!(err.code(), Some(onceq::types::ErrorCode::MessageNotFound));
    assert!(err.hint().is_some_and(|h| !h.is_empty()), "{err:?}");
    let err = c
        .update_queue(&onceq::types::request::UpdateQueue {
            name: Some("jobs".into()),
            completed_retention_seconds: Some(2_592_001),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::InvalidParams(ref r) if r.message.contains("completed_retention_seconds")),
        "{err:?}"
    );
    assert!(matches!(
        c.get_message("jobs", "a/b").await,
        Err(Error::Config(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_and_resume_a_queue() {
    let env = Env::start().await;
    let c = env.client();
    c.publish("jobs", &json!({"n": 1}), PublishOptions::default())
        .await
        .unwrap();
    let p = c.pause("jobs").await.unwrap();
    assert_eq!((p.queue.as_str(), p.paused), ("jobs", true));
    assert!(c.get_queue("jobs").await.unwrap().paused);
    assert!(c.stats("jobs").await.unwrap().paused);
    assert!(
        c.consume("jobs", Default::default())
            .await
            .unwrap()
            .is_empty()
    );
    assert!(!c.resume("jobs").await.unwrap().paused);
    assert_eq!(
        c.consume("jobs", Default::default()).await.unwrap().len(),
        1
    );
    let err = c.pause("nope").await.unwrap_err();
    assert!(matches!(err, Error::QueueNotFound(_)), "{err:?}");
    assert!(matches!(c.pause("a/b").await, Err(Error::Config(_))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_settings_for_running_a_queue() {
    let env = Env::start().await;
    let c = env.client();
    let q = c
        .create_queue(&onceq::types::request::CreateQueue {
            name: Some("jobs".into()),
            max_in_flight: Some(1),
            rate_per_sec: Some(50.0),
            retry_backoff: Some(onceq::types::request::RetryBackoffBody {
                initial_seconds: Some(1),
                max_seconds: Some(8),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!((q.max_in_flight, q.rate_per_sec), (Some(1), Some(50.0)));
    assert_eq!(
        q.retry_backoff.map(|b| (b.initial_seconds, b.max_seconds)),
        Some((1, 8))
    );
    for n in 0..3 {
        c.publish("jobs", &json!({"n": n}), PublishOptions::default())
            .await
            .unwrap();
    }
    let opts = || onceq::ConsumeOptions {
        max_messages: 10,
        ..Default::default()
    };
    assert_eq!(
        c.consume("jobs", opts()).await.unwrap().len(),
        1,
        "max_in_flight"
    );
    let q = c
        .update_queue(&onceq::types::request::UpdateQueue {
            name: Some("jobs".into()),
            max_in_flight: Some(None),
            retry_backoff: Some(None),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!((q.max_in_flight, q.retry_backoff), (None, None));
    assert_eq!(c.consume("jobs", opts()).await.unwrap().len(), 2);
    let err = c
        .update_queue(&onceq::types::request::UpdateQueue {
            name: Some("jobs".into()),
            rate_per_sec: Some(Some(0.0)),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::InvalidParams(ref r) if r.message.contains("rate_per_sec")),
        "{err:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idempotency_key_makes_a_mutating_call_once() {
    let env = Env::start().await;
    let c = env.client();
    for n in 0..2 {
        c.publish("q", &json!(n), PublishOptions::default())
            .await
            .unwrap();
    }
    let once = c.with_idempotency_key("purge-1").unwrap();
    assert_eq!(once.purge("q").await.unwrap(), 2);
    c.publish("q", &json!(3), PublishOptions::default())
        .await
        .unwrap();
    assert_eq!(
        once.purge("q").await.unwrap(),
        2,
        "the first answer, replayed"
    );
    assert_eq!(
        c.stats("q").await.unwrap().message_count,
        1,
        "nothing purged again"
    );
    // Another call with the same key: refused, not replayed.
    let err = once.redrive("q", None).await;
    assert!(
        err.is_ok() || matches!(err, Err(Error::InvalidParams(_))),
        "{err:?}"
    );
    assert!(matches!(
        once.delete_queue("other").await,
        Err(Error::QueueNotFound(_))
    ));
    assert!(matches!(
        c.with_idempotency_key("bad\nkey"),
        Err(Error::Config(_))
    ));
    // publish_batch: items without keys take `<key>:<index>`.
    let batch = c.with_idempotency_key("batch-1").unwrap();
    let items = || {
        (0..2)
            .map(|i| onceq::types::request::BatchItem {
                payload: Some(serde_json::value::to_raw_value(&i).unwrap()),
                ..Default::default()
            })
            .collect::<Vec<_>>()
    };
    let first = batch.publish_batch("b", items()).await.unwrap();
    let again = batch.publish_batch("b", items()).await.unwrap();
    assert_eq!(first[1].message_id, again[1].message_id);
    assert_eq!(c.stats("b").await.unwrap().message_count, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_capability_by_id() {
    let env = Env::start().await;
    let c = env.client();
    let publish = c.capability("queue.publish").await.unwrap();
    assert_eq!(
        (publish.method.as_str(), publish.path.as_str()),
        ("POST", "/v1/queue/publish")
    );
    match c.capability("queue.nope").await {
        Err(e) => assert_eq!(e.code(), Some(onceq::types::ErrorCode::NotFound), "{e}"),
        Ok(c) => panic!("found {c:?}"),
    }
}
