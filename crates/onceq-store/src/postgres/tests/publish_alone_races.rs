//! A publish alone (`publish::publish_alone`, the path of a publish whose
//! group failed) against a queue delete in progress. Its insert
//! (sql/message_insert.sql) takes the queue row's KEY SHARE lock (migration
//! V24): it waits for the delete, then stores nothing in the deleted queue,
//! and the publish stores its message in the queue made anew. The group
//! path's races are in tests/it/queue_delete_races.rs.

use super::*;
use crate::postgres::errors::Error;
use crate::postgres::publish::{Batch, publish_alone};
use crate::postgres::sql;
use onceq_testdb::locks::commit_once_waited_for;

/// Deletes queue `p`/`queue` with the store's own statements
/// (`queue_delete_once`), in a transaction left open.
async fn delete_left_open(url: &str, queue: &str) -> tokio_postgres::Client {
    let c = raw(url).await;
    c.batch_execute("BEGIN").await.unwrap();
    let id: i64 = c
        .query_one(sql::QUEUE_LOCK, &[&"p", &queue])
        .await
        .unwrap()
        .get(0);
    c.execute(sql::QUEUE_DELETE_MESSAGES, &[&id]).await.unwrap();
    c.execute(sql::QUEUE_DELETE, &[&id]).await.unwrap();
    c
}

/// Messages whose queue does not exist, and those in queue `p`/`queue`.
async fn counts(url: &str, queue: &str) -> (i64, i64) {
    let row = raw(url)
        .await
        .query_one(
            "SELECT count(*) FILTER (WHERE q.id IS NULL),
                    count(*) FILTER (WHERE q.project = 'p' AND q.name = $1)
             FROM onceq_messages m LEFT JOIN onceq_queues q ON q.id = m.queue_id",
            &[&queue],
        )
        .await
        .unwrap();
    (row.get(0), row.get(1))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_publish_alone_waits_for_a_queue_delete() {
    let db = PgStore::test_database().await;
    let store = PgStore::connect(&db.url).await.unwrap();
    store.message_publish(publish("q")).await.unwrap();
    let p = publish("q");
    let batch = Batch::new(&p).unwrap();
    let deleting = delete_left_open(&db.url, "q").await;
    let watch = raw(&db.url).await;
    let out = commit_once_waited_for(&deleting, &watch, publish_alone(&store.db, &p, &batch))
        .await
        .expect("stored in the queue made anew");
    assert_eq!(out[0].message_id, batch.ids[0]);
    assert_eq!(counts(&db.url, "q").await, (0, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keyed_publish_alone_loses_the_race_to_a_queue_delete_then_stores() {
    let db = PgStore::test_database().await;
    let store = PgStore::connect(&db.url).await.unwrap();
    store.message_publish(publish("q")).await.unwrap();
    let mut p = publish("q");
    p.messages[0].idempotency_key = Some("k".into());
    let batch = Batch::new(&p).unwrap();
    let deleting = delete_left_open(&db.url, "q").await;
    let watch = raw(&db.url).await;
    // It found the queue before the delete committed, took its key there,
    // and its insert found the queue gone: a lost race, rolled back.
    let first =
        commit_once_waited_for(&deleting, &watch, publish_alone(&store.db, &p, &batch)).await;
    assert!(matches!(first, Err(Error::Race(_))), "{first:?}");
    assert_eq!(counts(&db.url, "q").await, (0, 0));
    // The retry (publish_group's `alone_retrying`) makes the queue anew.
    let out = publish_alone(&store.db, &p, &batch).await.unwrap();
    assert!(!out[0].replay);
    assert_eq!(counts(&db.url, "q").await, (0, 1));
}
