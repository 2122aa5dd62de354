//! Key lookups from memory: kept exact by LISTEN/NOTIFY, bypassed while the
//! listener does not hear.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn key_lookups_are_cached_and_a_revoke_elsewhere_clears_them() {
    let db = PgStore::test_database().await;
    // Another process on the same database: the CLI, or a second server.
    let cli = PgStore::connect(&db.url).await.unwrap();
    let now = Timestamp::from_second(1_900_000_000).unwrap();
    cli.key_insert(key("one", 1)).await.unwrap();
    cli.key_insert(key("two", 2)).await.unwrap();
    // Connected after the inserts, so no notification of theirs can reach
    // the server late and make it drop (or not keep) what it reads below.
    let server = PgStore::connect(&db.url).await.unwrap();
    eventually("the listener listens", async || server.keys.is_live()).await;
    assert!(server.key_lookup(&[1; 32]).await.unwrap().is_some());
    assert!(server.key_lookup(&[2; 32]).await.unwrap().is_some());

    // Served from memory: a revoke that notifies nobody goes unseen.
    let sql = raw(&db.url).await;
    sql.batch_execute(
        "ALTER TABLE onceq_api_keys DISABLE TRIGGER onceq_keys_changed;
         UPDATE onceq_api_keys SET revoked_at = now() WHERE key_id = 'two';
         ALTER TABLE onceq_api_keys ENABLE TRIGGER onceq_keys_changed;",
    )
    .await
    .unwrap();
    assert!(server.key_lookup(&[2; 32]).await.unwrap().is_some());

    // A revoke through the store (as `onceq keys revoke` does) notifies:
    // the server drops every cached key and reads them again.
    assert!(cli.key_revoke("one", now).await.unwrap());
    eventually("the revoke reaches the server", async || {
        server.key_lookup(&[1; 32]).await.unwrap().is_none()
    })
    .await;
    assert!(server.key_lookup(&[2; 32]).await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_its_listener_the_cache_is_bypassed_and_starts_empty_again() {
    let db = PgStore::test_database().await;
    let server = PgStore::connect(&db.url).await.unwrap();
    server.key_insert(key("one", 1)).await.unwrap();
    eventually("the listener listens", async || server.keys.is_live()).await;
    assert!(server.key_lookup(&[1; 32]).await.unwrap().is_some());

    // Kill the listener's connection, then revoke silently: the change a
    // notification would have announced while it was down.
    let sql = raw(&db.url).await;
    sql.batch_execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE application_name = 'onceq-key-listener' AND datname = current_database();
         ALTER TABLE onceq_api_keys DISABLE TRIGGER onceq_keys_changed;
         UPDATE onceq_api_keys SET revoked_at = now() WHERE key_id = 'one';
         ALTER TABLE onceq_api_keys ENABLE TRIGGER onceq_keys_changed;",
    )
    .await
    .unwrap();
    eventually("lookups go to the database", async || {
        server.key_lookup(&[1; 32]).await.unwrap().is_none()
    })
    .await;
    // Back, it trusts nothing it held before.
    eventually("the listener reconnects", async || server.keys.is_live()).await;
    assert!(server.key_lookup(&[1; 32]).await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_that_hears_nothing_serves_nothing_from_memory() {
    // Through PgBouncer in transaction mode, LISTEN succeeds and then no
    // notification ever arrives: a revoked key kept working. Beside it a
    // listener on the database itself hears its pings; by the time it has
    // heard three, the deaf one would have heard some too.
    let db = PgStore::test_database().await;
    let cluster = onceq_testdb::shared_cluster().await;
    let bouncer = onceq_testdb::pgbouncer::PgBouncer::start(cluster, 2).await;
    let connect = |url: &str| onceq_pg::PgConnect::parse(url).unwrap();
    let store = PgStore::connect(&db.url).await.unwrap();
    let (deaf, _deaf_listener) =
        key_cache::listened(connect(&bouncer.url_of(&db.name)), store.db.clone());
    let (hearing, _listener) = key_cache::listened(connect(&db.url), store.db.clone());
    eventually("the direct listener hears three pings", async || {
        hearing.pings_heard() >= 3
    })
    .await;
    assert!(hearing.is_live());
    assert_eq!(deaf.pings_heard(), 0);
    assert!(!deaf.is_live(), "a deaf listener's cache answers");
}

#[tokio::test]
async fn a_dropped_store_closes_its_listener() {
    let db = PgStore::test_database().await;
    let store = PgStore::connect(&db.url).await.unwrap();
    eventually("the listener listens", async || store.keys.is_live()).await;
    drop(store);
    let sql = raw(&db.url).await;
    eventually("the listener's connection closes", async || {
        let n: i64 = sql
            .query_one(
                "SELECT count(*) FROM pg_stat_activity
                 WHERE application_name = 'onceq-key-listener' AND datname = current_database()",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        n == 0
    })
    .await;
}
