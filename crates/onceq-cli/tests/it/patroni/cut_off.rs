//! The leader cut off, not killed: its Patroni loses etcd (its gates
//! closed: the lock cannot be renewed) while a onceq server still reaches
//! its PostgreSQL directly. Patroni promotes the synchronous standby once
//! the lock expires. Two cases:
//!
//! - Patroni works: it demotes its PostgreSQL before the lock expires
//!   (`loop_wait + 2 × retry_timeout ≤ ttl`), so writes on it fail — onceq
//!   answers 503.
//! - Patroni is frozen too, so it cannot step down: the old leader's
//!   PostgreSQL still runs as a primary, but in strict synchronous mode its
//!   commits wait for a standby that now follows someone else, so onceq
//!   cannot acknowledge a write the new leader lacks: such publishes hang
//!   until the store timeout and answer 503.
//!
//! Either way, nothing acknowledged is missing on the new leader, and the
//! refused keys, retried there, are stored once.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use onceq_testdb::patroni::{PatroniNode, shared_patroni};

use super::load::{self, Load};
use super::{KEY, assert_all_on, run};
use crate::process::ServerProcess;

#[test]
fn a_cut_off_leader_steps_down_and_acknowledges_nothing_the_new_leader_lacks() {
    run(cut_off(false));
}

#[test]
fn a_cut_off_leader_that_cannot_step_down_acknowledges_nothing_the_new_leader_lacks() {
    run(cut_off(true));
}

/// Thaws and reconnects the node however the test ends.
struct CutOff<'a>(&'a PatroniNode);

impl Drop for CutOff<'_> {
    fn drop(&mut self) {
        self.0.signal_patroni("-CONT");
        self.0.reconnect();
    }
}

async fn cut_off(frozen: bool) {
    let (cluster, _turn) = shared_patroni().await;
    let db = cluster.create_database().await;
    let old = cluster.leader().await.expect("a leader");
    let url = cluster.node_url(old, &db);
    let server = tokio::task::spawn_blocking(move || {
        ServerProcess::on_postgres(&url, KEY, &["--store-timeout-ms", "2000"])
    })
    .await
    .unwrap();
    let load = Load::start(&server.url, KEY);
    load.until_more_acked(30, Duration::from_secs(30)).await;

    let node = &cluster.nodes[old];
    node.cut_off();
    if frozen {
        node.signal_patroni("-STOP");
    }
    let _cut = CutOff(node);
    let cut = Instant::now();
    let new = cluster
        .wait_for_leader(Some(old), Duration::from_secs(60))
        .await;
    let promoted = Instant::now();
    if frozen {
        // The old leader still runs as a primary: nothing demoted it.
        let in_recovery: bool = onceq_pg::PgConnect::parse(&cluster.node_url(old, "postgres"))
            .unwrap()
            .connect()
            .await
            .unwrap()
            .query_one("SELECT pg_is_in_recovery()", &[])
            .await
            .unwrap()
            .get(0);
        assert!(
            !in_recovery,
            "n{old} was demoted; this case needs it running as a primary"
        );
    }
    // Publishes on it now fail: hung on the synchronous standby it lost
    // (frozen), or refused by a demoted node.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let refused = load
            .seen
            .lock()
            .unwrap()
            .answers
            .iter()
            .filter(|a| a.at > promoted && a.status == 503)
            .count();
        if refused >= 6 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "publishes on the cut-off leader were not refused"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let seen = load.stop().await;
    drop(server);
    let what = match frozen {
        true => "cut-off leader, frozen",
        false => "cut-off leader",
    };
    seen.assert_only_retryable_failures(what);
    let acked_after = seen
        .answers
        .iter()
        .filter(|a| a.at > promoted && a.status == 200)
        .count();

    // Nothing it acknowledged is missing on the new leader.
    assert_all_on(cluster, new, &db, &seen.acked, what).await;

    // The refused keys, retried through HAProxy (which sends nothing to a
    // node whose REST API does not answer `/primary`; a multi-host URL
    // would still take the old leader, which claims to be read-write), are
    // stored once; the acknowledged ones replay.
    let url = cluster.haproxy_url(&db);
    cluster.wait_for_haproxy(Duration::from_secs(30)).await;
    let retry = tokio::task::spawn_blocking(move || ServerProcess::on_postgres(&url, KEY, &[]))
        .await
        .unwrap();
    let http = reqwest::Client::new();
    let refused: HashSet<&str> = seen
        .answers
        .iter()
        .filter(|a| a.status != 200 && !seen.acked.contains_key(&a.key))
        .map(|a| a.key.as_str())
        .collect();
    assert!(!refused.is_empty());
    let mut retried = std::collections::HashMap::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    for key in &refused {
        let a = loop {
            let a = load::publish(&http, &retry.url, KEY, key).await;
            if a.status == 200 || Instant::now() > deadline {
                break a;
            }
            assert!(
                a.status == 503 && a.retry_after,
                "retry of {key}: {}",
                a.body
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        assert_eq!(a.status, 200, "retry of {key}: {}", a.body);
        retried.insert(key.to_string(), load::message_id(&a.body));
    }
    for (key, id) in seen.acked.iter().take(20) {
        let a = load::publish(&http, &retry.url, KEY, key).await;
        assert_eq!(a.status, 200, "{}", a.body);
        assert!(
            a.body.contains("\"idempotent_replay\":true"),
            "{key}: {}",
            a.body
        );
        assert_eq!(&load::message_id(&a.body), id);
    }
    assert_all_on(cluster, new, &db, &retried, "retried after the cut").await;
    eprintln!(
        "patroni {what}: n{old} cut off, n{new} promoted {:.1} s later; {} publishes acknowledged before, \
         {acked_after} after the promotion (all on n{new}), {} answered 503; {} refused keys retried and stored once",
        (promoted - cut).as_secs_f64(),
        seen.acked.len(),
        seen.unavailable(),
        refused.len()
    );
}
