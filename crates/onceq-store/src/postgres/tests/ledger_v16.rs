//! Migration V16: V13's call-ledger rows keep their meaning in the shared
//! request ledger — an answered key still replays, a held one is still in
//! flight until its lease, and the old table is gone.

use super::{super::migrate, PgStore, raw};

#[tokio::test]
async fn v16_keeps_the_call_ledgers_rows() {
    let db = onceq_testdb::fresh_database().await;
    let mut client = raw(&db.url).await;
    migrate::runner()
        .set_target(refinery::Target::Version(15))
        .run_async(&mut client)
        .await
        .unwrap();
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
