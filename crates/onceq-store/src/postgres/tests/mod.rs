//! PostgreSQL-only behaviour the conformance suite cannot express: several
//! servers migrating at once, an outage of the database itself, a stall
//! (every process frozen) and a read-only database.

use jiff::Timestamp;

use super::{PgStore, key_cache};
use crate::test_support::{eventually, key};
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
            headers: None,
            hand_out: None,
        }],
        dedupe_window: jiff::SignedDuration::from_hours(24),
        new_queue_completed_retention: 0,
        now: Timestamp::from_second(1_900_000_000).unwrap(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_connects_migrate_once() {
    // Empty, not from the template: the migrations are what is tested.
    let db = onceq_testdb::fresh_database().await;
    let connects = (0..4).map(|_| {
        let url = db.url.clone();
        tokio::spawn(async move { PgStore::connect(&url).await })
    });
    for c in connects {
        c.await.unwrap().expect("every concurrent connect succeeds");
    }
    let client = raw(&db.url).await;
    // One row per migration: each applied exactly once.
    let applied: i64 = client
        .query_one("SELECT count(*) FROM refinery_schema_history", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(applied as usize, super::migrate::count());
}

#[tokio::test]
async fn pool_size_comes_from_the_url() {
    let db = PgStore::test_database().await;
    let store = PgStore::connect(&format!("{}?pool_size=3", db.url))
        .await
        .unwrap();
    // and the five committers' connections on top (pool.rs)
    assert_eq!(store.db.status().max_size, 3 + 5);
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

/// Every kind of call (a plain operation, a claim, the publish and ack
/// committers, the readiness probe) answers `Unavailable` within the store
/// timeout while the database is frozen (connections open, TCP acknowledged,
/// nothing answers), and works again once it thaws, without a new store.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_database_is_unavailable_within_the_bound_then_recovers() {
    use std::time::{Duration, Instant};

    const BOUND: Duration = Duration::from_millis(1000);
    const SLACK: Duration = Duration::from_millis(500);
    let cluster = onceq_testdb::TestCluster::start().await;
    let db = cluster.create_database().await;
    let options = crate::StoreOptions {
        op_timeout: BOUND,
        ..Default::default()
    };
    let store = PgStore::connect_with(&db.url, options).await.unwrap();
    let queue = QueueRef::new("p", "q");
    store.message_publish(publish("q")).await.unwrap();
    let claim = || crate::MessageClaim {
        queue: queue.clone(),
        max: 1,
        visibility_timeout: None,
        now: publish("q").now,
    };
    let held = store.message_claim(claim()).await.unwrap().remove(0);
    let ack = crate::MessageAck {
        lease: crate::LeaseRef {
            queue: queue.clone(),
            message_id: held.message_id.clone(),
            receipt: Some(held.receipt.clone()),
        },
        result: None,
        now: publish("q").now,
    };

    cluster.freeze();
    // Thawed however this test ends: a frozen cluster outlives the test.
    struct Thaw<'a>(&'a onceq_testdb::TestCluster);
    impl Drop for Thaw<'_> {
        fn drop(&mut self) {
            self.0.thaw();
        }
    }
    let thaw = Thaw(&cluster);
    for round in 0..2 {
        let started = Instant::now();
        let (published, claimed, acked, listed, pinged) = tokio::join!(
            store.message_publish(publish("q")),
            store.message_claim(claim()),
            store.message_ack(ack.clone()),
            store.queue_list("p"),
            store.ping(),
        );
        let took = started.elapsed();
        for (what, unavailable) in [
            (
                "publish",
                matches!(published, Err(StoreError::Unavailable(_))),
            ),
            ("claim", matches!(claimed, Err(StoreError::Unavailable(_)))),
            ("ack", matches!(acked, Err(StoreError::Unavailable(_)))),
            (
                "queue_list",
                matches!(listed, Err(StoreError::Unavailable(_))),
            ),
            ("ping", matches!(pinged, Err(StoreError::Unavailable(_)))),
        ] {
            assert!(unavailable, "round {round}: {what} while frozen");
        }
        assert!(took <= BOUND + SLACK, "round {round} took {took:?}");
    }
    let Err(e) = store.ping().await else {
        unreachable!("checked above")
    };
    assert!(e.to_string().contains("store timeout"), "{e}");

    drop(thaw);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let pinged = store.ping().await;
        let published = store.message_publish(publish("q")).await;
        if pinged.is_ok() && published.is_ok() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no recovery: {pinged:?} {published:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The ack answered 503 may or may not have been done; acking again is
    // harmless either way.
    store.message_ack(ack).await.unwrap();
}

/// A database that answers but cannot write (a standby, or sessions made
/// read-only) is not ready: reads would succeed, every write would fail.
#[tokio::test]
async fn a_read_only_database_is_not_ready() {
    let db = PgStore::test_database().await;
    let store = PgStore::connect(&db.url).await.unwrap();
    store.ping().await.unwrap();
    let admin = raw(&db.url).await;
    // New sessions read-only, and the store's sessions ended so that it
    // opens new ones.
    let end_others = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                      WHERE datname = current_database() AND pid <> pg_backend_pid()";
    // Two round trips, not one: in one simple query both statements share
    // an implicit transaction, so the sessions were ended before the
    // setting committed and a store connection opened in between came up
    // writable (seen once in a full run: "ready while read-only").
    let alter = |setting: &'static str| {
        let admin = &admin;
        let statement = format!("ALTER DATABASE \"{}\" {setting}", db.name);
        async move {
            admin.batch_execute(&statement).await.unwrap();
            admin.batch_execute(end_others).await.unwrap();
        }
    };
    alter("SET default_transaction_read_only = on").await;
    // The first probes may meet a terminated connection (also not ready);
    // none may say ready, and soon one says why.
    let mut said_read_only = false;
    for _ in 0..20 {
        let pinged = store.ping().await;
        let Err(e) = pinged else {
            panic!("ready while read-only")
        };
        assert!(matches!(e, StoreError::Unavailable(_)), "{e:?}");
        if e.to_string().contains("read-only") {
            said_read_only = true;
            break;
        }
    }
    assert!(said_read_only, "never said read-only");
    // Reads still work: a read is no readiness probe.
    store.queue_list("p").await.unwrap();

    alter("RESET default_transaction_read_only").await;
    let mut ready = false;
    for _ in 0..20 {
        if store.ping().await.is_ok() {
            ready = true;
            break;
        }
    }
    assert!(ready, "not ready again once writable");
}

/// The FIFO publish protocol: a publish to a group waits for an earlier,
/// uncommitted publish to that group (which holds the group's lock from
/// before its `seq` until COMMIT), so a claim never hands out a later
/// message while an earlier one can still appear. Stands in for the
/// uncommitted first publisher with a raw transaction doing what a publish
/// does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifo_publishes_to_one_group_commit_in_seq_order() {
    let db = PgStore::test_database().await;
    let store = std::sync::Arc::new(PgStore::connect(&db.url).await.unwrap());
    let now = Timestamp::from_second(1_900_000_000).unwrap();
    store.key_insert(key("k", 7)).await.unwrap();
    store
        .queue_create(crate::QueueCreate {
            queue: QueueRef::new("p", "orders"),
            settings: onceq_types::queue::QueueSettings {
                queue_type: onceq_types::QueueType::Fifo,
                ..Default::default()
            },
            now,
        })
        .await
        .unwrap();

    let mut conn = raw(&db.url).await;
    let first = conn.transaction().await.unwrap();
    let queue_id: i64 = first
        .query_one("SELECT id FROM onceq_queues WHERE name = 'orders'", &[])
        .await
        .unwrap()
        .get(0);
    first
        .execute(super::sql::FIFO_GROUP_LOCK, &[&queue_id, &"default"])
        .await
        .unwrap();
    first
        .execute(
            "INSERT INTO onceq_messages (id, queue_id, state, payload, group_id, visible_at, created_at)
             VALUES ('qmsg_first', $1, 'available', '{}', 'default', $2, $2)",
            &[&queue_id, &now],
        )
        .await
        .unwrap();

    // The second publish waits for the first's COMMIT.
    let second = tokio::spawn({
        let store = store.clone();
        async move { store.message_publish(publish("orders")).await }
    });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!second.is_finished(), "a publish to the group waits");
    let claim = |store: std::sync::Arc<PgStore>| async move {
        store
            .message_claim(crate::MessageClaim {
                queue: QueueRef::new("p", "orders"),
                max: 10,
                visibility_timeout: None,
                now,
            })
            .await
            .unwrap()
    };
    assert!(
        claim(store.clone()).await.is_empty(),
        "nothing committed yet"
    );

    first.commit().await.unwrap();
    second.await.unwrap().unwrap();
    let got = claim(store.clone()).await;
    assert_eq!(got.len(), 1);
    assert_eq!(
        got[0].message_id, "qmsg_first",
        "the first publish goes first"
    );
}

/// A plain connection to the test database, for changes behind the
/// stores' backs.
async fn raw(url: &str) -> tokio_postgres::Client {
    onceq_testdb::connect(url).await
}

/// A fresh database migrated up to `version` only, and a plain connection
/// to it: for a migration's test, which writes rows as an older server did
/// before a store connects and applies the rest.
async fn migrated_to(version: i32) -> (onceq_testdb::TestDatabase, tokio_postgres::Client) {
    let db = onceq_testdb::fresh_database().await;
    let mut client = raw(&db.url).await;
    super::migrate::runner()
        .set_target(refinery::Target::Version(version))
        .run_async(&mut client)
        .await
        .unwrap();
    (db, client)
}

mod claim_groups;
mod finished_v23;
mod hot_functions;
mod keys;
mod keys_behind_pooler;
mod ledger_v16;
mod plain_claims;
mod plans;
mod publish_alone_races;
