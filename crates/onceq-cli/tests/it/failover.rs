//! Failover without loss: `onceq serve` on a primary with a synchronous
//! standby (the recommended HA setup, docs/guarantees.md), given both hosts
//! and `target_session_attrs=read-write`. Publishers keep publishing (each
//! retrying with its own idempotency key, as a real client does) while the
//! primary is SIGKILLed and the standby promoted; afterwards every publish
//! the server acknowledged is on the new primary, once, and publishing the
//! same keys again is a replay of the same message.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use onceq::PublishOptions;
use onceq_testdb::{ClusterOptions, TestCluster};

use crate::process::ServerProcess;

const QUEUE: &str = "orders";
const PUBLISHERS: usize = 4;
/// How soon after the promotion the server must publish again: it only has
/// to notice its connections died and open new ones on the other host.
const BACK_WITHIN: Duration = Duration::from_secs(15);

/// Idempotency key → message id, for every publish answered 200.
type Acked = Arc<Mutex<HashMap<String, String>>>;

#[test]
fn sigkill_of_the_primary_loses_no_acknowledged_publish() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(failover());
}

async fn failover() {
    let primary = TestCluster::start_with_options(ClusterOptions::default()).await;
    let standby = TestCluster::start_standby(&primary, "standby1", ClusterOptions::default()).await;
    // Only now: set before the base backup, the standby would inherit it
    // and, once promoted, wait for a standby of its own on every commit.
    let admin = onceq_pg::PgConnect::parse(&primary.admin_url())
        .unwrap()
        .connect()
        .await
        .unwrap();
    for sql in [
        "ALTER SYSTEM SET synchronous_standby_names = 'standby1'",
        "SELECT pg_reload_conf()",
    ] {
        admin.batch_execute(sql).await.unwrap();
    }
    wait_for_sync_standby(&admin).await;
    let db = primary.create_named_database("failover").await;
    let url = format!(
        "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/{}?target_session_attrs=read-write&connect_timeout=2",
        primary.port(),
        standby.port(),
        db.name
    );
    let server = ServerProcess::on_postgres(&url, "failover-key", &[]);
    let client = onceq::Client::new(&server.url, "failover-key")
        .unwrap()
        .with_retry(onceq::RetryPolicy {
            max_attempts: 1,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(10),
        });

    let acked: Acked = Arc::default();
    let stop = tokio_util::sync::CancellationToken::new();
    let publishers: Vec<_> = (0..PUBLISHERS)
        .map(|p| {
            tokio::spawn(publish_until(
                client.clone(),
                p,
                acked.clone(),
                stop.clone(),
            ))
        })
        .collect();
    until_acked(&acked, 50).await;

    primary.kill_postmaster();
    let killed = Instant::now();
    tokio::time::sleep(Duration::from_millis(500)).await;
    standby.promote().await;
    let promoted = Instant::now();
    let before = acked.lock().unwrap().len();
    let deadline = promoted + BACK_WITHIN;
    while acked.lock().unwrap().len() < before + 50 {
        assert!(
            Instant::now() < deadline,
            "publishing did not come back within {BACK_WITHIN:?} of the promotion"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    eprintln!(
        "failover: {before} publishes acknowledged before; publishing again {:?} after the kill, {:?} after the promotion",
        killed.elapsed(),
        promoted.elapsed()
    );
    stop.cancel();
    let mut attempts = 0;
    for p in publishers {
        attempts += p.await.unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    assert!(
        attempts > acked.len(),
        "some publishes must have failed during the outage"
    );

    // Every acknowledged publish is on the new primary, exactly once.
    let new_primary = onceq_pg::PgConnect::parse(&standby.url_of(&db.name))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let rows = new_primary
        .query("SELECT idempotency_key, id FROM onceq_messages", &[])
        .await
        .unwrap();
    let mut stored: HashMap<String, String> = HashMap::new();
    for row in rows {
        let key: String = row.get(0);
        let previous = stored.insert(key.clone(), row.get(1));
        assert!(previous.is_none(), "key {key} stored twice");
    }
    for (key, id) in &acked {
        assert_eq!(stored.get(key), Some(id), "acknowledged publish {key} lost");
    }

    // The dedupe keys came along: the same keys again are replays.
    for (key, id) in acked.iter().take(20) {
        let again = client
            .publish(QUEUE, &serde_json::json!({"key": key}), keyed(key))
            .await
            .unwrap();
        assert!(again.replay, "{key} was stored again after the failover");
        assert_eq!(&again.message.message_id, id);
    }
    drop(server);
}

fn keyed(key: &str) -> PublishOptions {
    PublishOptions {
        idempotency_key: Some(key.to_owned()),
        ..PublishOptions::default()
    }
}

/// Publishes `p-0`, `p-1`, … in turn, each retried (same key) until the
/// server acknowledges it; returns how many calls it made.
async fn publish_until(
    client: onceq::Client,
    p: usize,
    acked: Acked,
    stop: tokio_util::sync::CancellationToken,
) -> usize {
    let mut calls = 0;
    for i in 0.. {
        let key = format!("{p}-{i}");
        loop {
            if stop.is_cancelled() {
                return calls;
            }
            calls += 1;
            match client
                .publish(QUEUE, &serde_json::json!({"key": key}), keyed(&key))
                .await
            {
                Ok(published) => {
                    acked
                        .lock()
                        .unwrap()
                        .insert(key.clone(), published.message.message_id);
                    break;
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    }
    calls
}

async fn until_acked(acked: &Acked, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while acked.lock().unwrap().len() < n {
        assert!(
            Instant::now() < deadline,
            "no publishes before the failover"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn wait_for_sync_standby(admin: &tokio_postgres::Client) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let rows = admin
            .query(
                "SELECT 1 FROM pg_stat_replication WHERE application_name = 'standby1' AND sync_state = 'sync'",
                &[],
            )
            .await
            .unwrap();
        if !rows.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the standby never became synchronous"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
