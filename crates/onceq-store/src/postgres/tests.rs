//! PostgreSQL-only behaviour the conformance suite cannot express: several
//! servers migrating at once, and an outage of the database itself.

use jiff::Timestamp;

use super::PgStore;
use crate::{MessagePublish, NewMessage, QueueRef, Store, StoreError};

fn publish(queue: &str) -> MessagePublish {
    MessagePublish {
        queue: QueueRef::new("p", queue),
        messages: vec![NewMessage {
            payload: "{}".into(),
            delay: jiff::SignedDuration::ZERO,
            priority: 0,
            idempotency_key: None,
            group_id: None,
        }],
        dedupe_window: jiff::SignedDuration::from_hours(24),
        now: Timestamp::from_second(1_900_000_000).unwrap(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_connects_migrate_once() {
    let db = onceq_testdb::fresh_database().await;
    let connects = (0..4).map(|_| {
        let url = db.url.clone();
        tokio::spawn(async move { PgStore::connect(&url).await })
    });
    for c in connects {
        c.await.unwrap().expect("every concurrent connect succeeds");
    }
    let (client, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    let applied: i64 = client
        .query_one("SELECT count(*) FROM refinery_schema_history", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(applied, 1);
}

#[tokio::test]
async fn pool_size_comes_from_the_url() {
    let db = onceq_testdb::fresh_database().await;
    let store = PgStore::connect(&format!("{}?pool_size=3", db.url))
        .await
        .unwrap();
    assert_eq!(store.pool.status().max_size, 3);
}

#[tokio::test]
async fn unreachable_database_is_unavailable() {
    // Bind and drop: a port with nobody listening.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = PgStore::connect(&format!("postgres://postgres@127.0.0.1:{port}/x"))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Unavailable(_)), "{err:?}");
}

#[tokio::test]
async fn recovers_when_the_database_comes_back() {
    let cluster = onceq_testdb::TestCluster::start().await;
    let db = cluster.create_database().await;
    let store = PgStore::connect(&db.url).await.unwrap();
    store.message_publish(publish("q")).await.unwrap();

    cluster.stop(onceq_testdb::StopMode::Immediate).await;
    for _ in 0..3 {
        let err = store.message_publish(publish("q")).await.unwrap_err();
        assert!(matches!(err, StoreError::Unavailable(_)), "{err:?}");
    }

    cluster.restart_server().await;
    // The pooled connections died with the server; none may be handed out.
    store.message_publish(publish("q")).await.unwrap();
    let stats = store
        .queue_stats(&QueueRef::new("p", "q"), publish("q").now)
        .await
        .unwrap();
    assert_eq!(stats.available, 2);
}
