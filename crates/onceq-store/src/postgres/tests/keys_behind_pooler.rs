//! Key lookups from memory behind a real PgBouncer in transaction mode,
//! kept exact by the polled change count (`key_cache.rs`, migration V18):
//! a change made anywhere is seen by every server within
//! [`crate::key_cache::HEARD_WITHIN`] of its commit, and a cache whose polls fail
//! steps aside.

use std::time::Instant;

use onceq_testdb::pgbouncer::PgBouncer;

use super::*;
use crate::RateLimit;

/// A store behind `bouncer`, with `pgbouncer=transaction`; a generous
/// store timeout, as the whole suite shares the machine (connecting learns
/// every statement's parameter types through the pooler).
async fn behind(bouncer: &PgBouncer, database: &str) -> PgStore {
    let url = format!("{}?pgbouncer=transaction", bouncer.url_of(database));
    let options = crate::StoreOptions {
        op_timeout: std::time::Duration::from_secs(30),
        ..Default::default()
    };
    PgStore::connect_with(&url, options)
        .await
        .unwrap_or_else(|e| panic!("connect through pgbouncer: {e}\n{}", bouncer.log()))
}

/// Sleeps until `HEARD_WITHIN` after `since`: every lookup from then on
/// must see what was committed before `since`.
async fn past_the_bound(since: Instant) {
    tokio::time::sleep_until((since + crate::key_cache::HEARD_WITHIN).into()).await;
}

/// Changes `sql` without moving the change count (the trigger disabled):
/// what a server still answers afterwards came from its memory.
async fn behind_the_count(sql: &tokio_postgres::Client, change: &str) {
    sql.batch_execute(&format!(
        "ALTER TABLE onceq_api_keys DISABLE TRIGGER onceq_keys_changed;
         {change};
         ALTER TABLE onceq_api_keys ENABLE TRIGGER onceq_keys_changed;"
    ))
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_pgbouncer_keys_are_cached_and_every_server_sees_a_change_within_the_bound() {
    let db = PgStore::test_database().await;
    let bouncer = PgBouncer::start(onceq_testdb::shared_cluster().await, 3).await;
    // The CLI and two servers, all through the pooler.
    let cli = behind(&bouncer, &db.name).await;
    for (id, hash) in [("one", 1), ("two", 2), ("three", 3)] {
        cli.key_insert(key(id, hash)).await.unwrap();
    }
    let servers = [
        behind(&bouncer, &db.name).await,
        behind(&bouncer, &db.name).await,
    ];
    for server in &servers {
        eventually("the change count is polled", async || server.keys.is_live()).await;
        for hash in 1..=3 {
            assert!(server.key_lookup(&[hash; 32]).await.unwrap().is_some());
        }
    }

    // Served from memory: a revoke that leaves the count alone goes unseen
    // (before the count, every lookup behind a pooler read the database).
    let sql = raw(&db.url).await;
    behind_the_count(
        &sql,
        "UPDATE onceq_api_keys SET revoked_at = now() WHERE key_id = 'three'",
    )
    .await;
    for server in &servers {
        assert!(
            server.key_lookup(&[3; 32]).await.unwrap().is_some(),
            "not cached behind the pooler"
        );
    }

    // A revoke and a new rate through the store move the count: once the
    // bound has passed since they returned, both servers answer from the
    // database's present (and the silent revoke is seen with them).
    let now = Timestamp::from_second(1_900_000_000).unwrap();
    assert!(cli.key_revoke("one", now).await.unwrap());
    let rate = RateLimit {
        per_sec: 5.0,
        burst: 7,
    };
    assert!(cli.key_set_rate("two", Some(rate)).await.unwrap());
    past_the_bound(Instant::now()).await;
    for server in &servers {
        assert!(server.key_lookup(&[1; 32]).await.unwrap().is_none());
        let two = server.key_lookup(&[2; 32]).await.unwrap().unwrap();
        assert_eq!(two.rate, Some(rate));
        assert!(server.key_lookup(&[3; 32]).await.unwrap().is_none());
    }

    // A change in psql, whoever makes it, moves the count too.
    sql.batch_execute("UPDATE onceq_api_keys SET revoked_at = now() WHERE key_id = 'two'")
        .await
        .unwrap();
    past_the_bound(Instant::now()).await;
    for server in &servers {
        assert!(server.key_lookup(&[2; 32]).await.unwrap().is_none());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_pgbouncer_a_cache_whose_polls_fail_steps_aside_and_starts_empty_again() {
    let db = PgStore::test_database().await;
    let bouncer = PgBouncer::start(onceq_testdb::shared_cluster().await, 2).await;
    let server = behind(&bouncer, &db.name).await;
    server.key_insert(key("one", 1)).await.unwrap();
    eventually("the change count is polled", async || server.keys.is_live()).await;
    assert!(server.key_lookup(&[1; 32]).await.unwrap().is_some());

    // The count unreadable (every poll fails), and a revoke it does not
    // record: once the bound has passed, lookups go to the database.
    let sql = raw(&db.url).await;
    sql.batch_execute("ALTER TABLE onceq_key_changes RENAME TO onceq_key_changes_away")
        .await
        .unwrap();
    let unreadable = Instant::now();
    behind_the_count(
        &sql,
        "UPDATE onceq_api_keys SET revoked_at = now() WHERE key_id = 'one'",
    )
    .await;
    past_the_bound(unreadable).await;
    assert!(!server.keys.is_live(), "a cache nobody vouches for answers");
    assert!(server.key_lookup(&[1; 32]).await.unwrap().is_none());

    // Readable again: it trusts nothing it held before.
    sql.batch_execute("ALTER TABLE onceq_key_changes_away RENAME TO onceq_key_changes")
        .await
        .unwrap();
    eventually("the change count is polled again", async || {
        server.keys.is_live()
    })
    .await;
    assert!(server.key_lookup(&[1; 32]).await.unwrap().is_none());
}
