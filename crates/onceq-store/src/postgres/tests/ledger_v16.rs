//! Migration V16: V13's call-ledger rows keep their meaning in the shared
//! request ledger — an answered key still replays, a held one is still in
//! flight until its lease, and the old table is gone. And V19: the entries
//! already kept are counted.

use super::{PgStore, migrated_to};

#[tokio::test]
async fn v16_keeps_the_call_ledgers_rows() {
    let (db, client) = migrated_to(15).await;
    client
        .batch_execute(
            "INSERT INTO onceq_call_ledger (project, capability, key, fingerprint, token,
                 status, body, locked_until, created_at, completed_at, expires_at)
             VALUES ('a b', 'queue.create', 'done', decode(repeat('01', 32), 'hex'), 't1',
                     200, '{\"ok\":true}'::bytea, NULL,
                     to_timestamp(1000), to_timestamp(1001), to_timestamp(90000)),
                    ('p', 'queue.nack', 'busy', decode(repeat('02', 32), 'hex'), 't2',
                     NULL, NULL, to_timestamp(1030),
                     to_timestamp(1000), NULL, to_timestamp(90000))",
        )
        .await
        .unwrap();
    let store = PgStore::connect(&db.url).await.unwrap();
    crate::rules::ledger::check_v16_rows(&store).await;
    let old: Option<String> = client
        .query_one("SELECT to_regclass('onceq_call_ledger')::text", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(old, None);
}

/// Migration V19 counts the entries already kept (`check_v19_counts`).
#[tokio::test]
async fn v19_counts_the_entries_already_kept() {
    let (db, client) = migrated_to(17).await;
    client
        .batch_execute(
            "INSERT INTO onceq_request_ledger (scope, key, fingerprint, token, status, headers,
                 body, locked_until, created_at, completed_at, expires_at)
             VALUES ('server:3:a b queue.ack', 'k1', decode(repeat('01', 32), 'hex'), 't1',
                     200, '[]', '{\"ok\":true}'::bytea, NULL,
                     to_timestamp(1000), to_timestamp(1001), to_timestamp(90000)),
                    ('server:3:a b queue.nack', 'k2', decode(repeat('02', 32), 'hex'), 't2',
                     NULL, NULL, NULL, to_timestamp(1030),
                     to_timestamp(1000), NULL, to_timestamp(90000)),
                    ('server:1:p queue.ack', 'k1', decode(repeat('03', 32), 'hex'), 't3',
                     200, '[]', 'xyz'::bytea, NULL,
                     to_timestamp(1000), to_timestamp(1001), to_timestamp(90000)),
                    ('1:toolkit GET /x', 'k', decode(repeat('04', 32), 'hex'), 't4',
                     200, '[]', 'zzzz'::bytea, NULL,
                     to_timestamp(1000), to_timestamp(1001), to_timestamp(90000))",
        )
        .await
        .unwrap();
    let store = PgStore::connect(&db.url).await.unwrap();
    crate::rules::ledger::check_v19_counts(&store).await;
}
