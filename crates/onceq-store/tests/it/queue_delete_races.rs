//! PostgreSQL: a queue delete in progress against each operation that puts
//! messages into a queue. Since migration V24 no foreign key keeps a message
//! out of a queue that is gone: each of those statements takes the queue
//! row's KEY SHARE lock itself, so it waits for the delete, then finds the
//! queue gone. Each test holds a delete open (the queue's row locked, its
//! messages and the row deleted, not committed), starts the operation,
//! commits the delete once the operation waits for it, and counts the
//! messages left in no queue: none. Without the lock the operation does not
//! wait (its snapshot still has the queue) and leaves one.

use onceq_store::{DlqRedrive, MessageIds, StoreError};
use onceq_types::queue::QueueSettings;

use crate::{Harness, MsgExt, defaults, msg, payload};

/// A raw connection to the harness's database.
async fn connect(h: &Harness) -> tokio_postgres::Client {
    onceq_testdb::connect(h.postgres_url().expect("a postgres harness")).await
}

/// Deletes `queue` as `Store::queue_delete` does (the row locked first,
/// then its messages, then the row), in a transaction left open.
async fn delete_left_open(h: &Harness, queue: &str) -> tokio_postgres::Client {
    let c = connect(h).await;
    c.batch_execute("BEGIN").await.unwrap();
    let id: i64 = c
        .query_one(
            "SELECT id FROM onceq_queues WHERE project = $1 AND name = $2 FOR UPDATE",
            &[&h.project, &queue],
        )
        .await
        .expect("the queue exists")
        .get(0);
    c.execute("DELETE FROM onceq_messages WHERE queue_id = $1", &[&id])
        .await
        .unwrap();
    c.execute("DELETE FROM onceq_queues WHERE id = $1", &[&id])
        .await
        .unwrap();
    c
}

/// Runs `op` while `queue`'s delete is open, committing the delete as soon
/// as `op` waits for it. `op`'s answer.
async fn while_deleting<T>(h: &Harness, queue: &str, op: impl Future<Output = T>) -> T {
    let deleting = delete_left_open(h, queue).await;
    let watch = connect(h).await;
    onceq_testdb::locks::commit_once_waited_for(&deleting, &watch, op).await
}

/// Messages whose queue does not exist.
async fn strays(h: &Harness) -> i64 {
    connect(h)
        .await
        .query_one(
            "SELECT count(*) FROM onceq_messages m
             WHERE NOT EXISTS (SELECT 1 FROM onceq_queues q WHERE q.id = m.queue_id)",
            &[],
        )
        .await
        .unwrap()
        .get(0)
}

/// A message published to `jobs`, a queue that hands each message out once
/// (`max_retries` 0) and has a DLQ, `jobs-dlq`.
async fn one_try_message(h: &Harness) -> onceq_store::PublishOutcome {
    let once = QueueSettings {
        max_retries: 0,
        ..defaults()
    };
    h.create("jobs", once).await.unwrap();
    h.publish_one("jobs", &payload(1)).await
}

/// A message published to `jobs` and dead-lettered into `jobs-dlq`.
async fn dead_letter(h: &Harness) -> onceq_store::PublishOutcome {
    let p = h.publish_one("jobs", &payload(1)).await;
    let c = h.claim_one("jobs").await;
    assert!(h.nack_claimed("jobs", &c, false).await.dead_lettered);
    p
}

/// A publish to a queue its server has just published to (the group path,
/// the queue's id cached): it waits, then stores its message in the queue
/// made anew, as a first publish does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_publish_waits_for_a_queue_delete_and_makes_the_queue_anew() {
    let h = Harness::postgres().await;
    h.publish_one("jobs", &payload(1)).await;
    let out = while_deleting(&h, "jobs", h.publish("jobs", vec![msg(&payload(2))])).await;
    let out = out.expect("the publish succeeds");
    assert_eq!(strays(&h).await, 0, "no message left in the deleted queue");
    let s = h.stats("jobs").await;
    assert_eq!(s.message_count, 1, "only the publish after the delete");
    assert_eq!(h.claim_one("jobs").await.message_id, out[0].message_id);
}

/// The same with an idempotency key: its key goes with the deleted queue,
/// and the message is stored once, in the queue made anew.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_keyed_publish_waits_for_a_queue_delete() {
    let h = Harness::postgres().await;
    h.publish_msg("jobs", msg(&payload(1)).key("a")).await;
    let out = while_deleting(
        &h,
        "jobs",
        h.publish("jobs", vec![msg(&payload(2)).key("b")]),
    )
    .await;
    let out = out.expect("the publish succeeds");
    assert!(!out[0].replay);
    assert_eq!(strays(&h).await, 0);
    assert_eq!(h.stats("jobs").await.message_count, 1);
    let again = h.publish_msg("jobs", msg(&payload(2)).key("b")).await;
    assert!(again.replay, "its key is held in the new queue");
    assert_eq!(again.message_id, out[0].message_id);
}

/// A nack that dead-letters (the last hand-out allowed) into a DLQ being
/// deleted: the message stays in its queue, requeued, as in a queue without
/// a DLQ.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_nack_into_a_dlq_being_deleted_requeues() {
    let h = Harness::postgres().await;
    let p = one_try_message(&h).await;
    let c = h.claim_one("jobs").await;
    let out = while_deleting(&h, "jobs-dlq", h.nack_claimed("jobs", &c, true)).await;
    assert!(out.requeued && !out.dead_lettered, "{out:?}");
    assert_eq!(strays(&h).await, 0);
    assert_eq!(h.claim_one("jobs").await.message_id, p.message_id);
}

/// A lease expiring into a DLQ being deleted (its last hand-out allowed):
/// requeued instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_lease_expiring_into_a_dlq_being_deleted_requeues() {
    let mut h = Harness::postgres().await;
    let p = one_try_message(&h).await;
    h.claim_one("jobs").await;
    h.advance(31);
    let out = while_deleting(&h, "jobs-dlq", h.lease_expire(10)).await;
    assert_eq!((out.requeued, out.dead_lettered), (1, 0), "{out:?}");
    assert_eq!(strays(&h).await, 0);
    assert_eq!(h.claim_one("jobs").await.message_id, p.message_id);
}

/// A redrive into a queue being deleted: the queue is not found, and the
/// dead letters stay in the DLQ.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_redrive_into_a_queue_being_deleted_finds_no_queue() {
    let h = Harness::postgres().await;
    let p = dead_letter(&h).await;
    let redrive = DlqRedrive {
        queue: h.q("jobs"),
        max: None,
        now: h.now,
    };
    let out = while_deleting(&h, "jobs", h.store.dlq_redrive(redrive)).await;
    assert!(matches!(out, Err(StoreError::QueueNotFound)), "{out:?}");
    assert_eq!(strays(&h).await, 0);
    assert_eq!(h.claim_one("jobs-dlq").await.message_id, p.message_id);
}

/// The same by ids (the dashboard's bulk redrive).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_redrive_by_ids_into_a_queue_being_deleted_finds_no_queue() {
    let h = Harness::postgres().await;
    let p = dead_letter(&h).await;
    let ids = MessageIds {
        queue: h.q("jobs"),
        message_ids: vec![p.message_id.clone()],
        now: h.now,
    };
    let out = while_deleting(&h, "jobs", h.store.dlq_redrive_many(ids)).await;
    assert!(matches!(out, Err(StoreError::QueueNotFound)), "{out:?}");
    assert_eq!(strays(&h).await, 0);
    let c = h.claim_one("jobs-dlq").await;
    assert_eq!(c.message_id, p.message_id);
}
