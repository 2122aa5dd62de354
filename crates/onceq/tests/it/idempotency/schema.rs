//! Creating the PostgreSQL ledger where it exists already (every process
//! start after the first) takes no lock on its table, so it never waits
//! behind the writes in flight: after a failover those can take seconds,
//! and a start queued behind them holds up every write queued behind it.

use std::str::FromStr;

use onceq::idempotency::PgLedger;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creating_an_existing_ledger_does_not_wait_behind_a_write() {
    let db = onceq_testdb::fresh_database().await;
    PgLedger::new(crate::harness::pool(&db.url)).await.unwrap();

    // A write in flight: an open transaction holding what an INSERT holds.
    let (writer, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    writer
        .batch_execute("BEGIN; LOCK TABLE onceq_request_ledger IN ROW EXCLUSIVE MODE")
        .await
        .unwrap();

    // A second process starts. Its lock_timeout turns a wait for the table
    // (the writer never commits) into an error instead of a hang.
    let mut config = tokio_postgres::Config::from_str(&db.url).unwrap();
    config.options("-c lock_timeout=10s");
    let manager = deadpool_postgres::Manager::new(config, tokio_postgres::NoTls);
    let pool = deadpool_postgres::Pool::builder(manager)
        .max_size(1)
        .build()
        .unwrap();
    PgLedger::new(pool)
        .await
        .expect("the ledger exists: its creation must not wait for the table");

    writer.batch_execute("ROLLBACK").await.unwrap();
}
