//! onceq on a Patroni cluster (`onceq_testdb::patroni`: etcd, three nodes
//! in strict synchronous mode, HAProxy on Patroni's template), through both
//! ways an operator connects: every node in a multi-host URL with
//! `target_session_attrs=read-write`, and HAProxy routing to the node whose
//! REST API answers `/primary`.
//!
//! - `failover`: the leader SIGKILLed under load, Patroni promotes its
//!   synchronous standby with no human step.
//! - `switchover`: `patronictl switchover` under load.
//! - `cut_off`: the leader cut off from etcd (and its Patroni frozen, so
//!   it cannot step down) while a server still reaches its PostgreSQL.
//! - `load`: publishers, consumers and what they saw.
//!
//! After each fault: every acknowledged publish is on the new leader once
//! (its dedupe key and message id), its key replays, a lease taken before
//! the fault is acked with its receipt after it, the cron schedules fired
//! each tick once, and clients saw nothing but 200 or 503 with
//! `Retry-After`. The tests share the process's one Patroni cluster, one at
//! a time (`shared_patroni`), and print how long publishing was out.

mod cut_off;
mod failover;
mod load;
mod switchover;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use onceq_testdb::patroni::PatroniCluster;

use crate::process::ServerProcess;
use load::{Load, Seen};

/// The servers' API key (the chaos crate's cron scenario uses it).
const KEY: &str = onceq_chaos::API_KEY;

/// How a server reaches the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// Every node, `target_session_attrs=read-write`.
    MultiHost,
    /// HAProxy, checking Patroni's `/primary`.
    Haproxy,
}

impl Way {
    fn url(self, cluster: &PatroniCluster, db: &str) -> String {
        match self {
            Way::MultiHost => cluster.multi_host_url(db),
            Way::Haproxy => cluster.haproxy_url(db),
        }
    }
}

/// A server on a fresh database of the cluster, with cron schedules
/// firing, a lease held from before the fault, and the load running.
pub struct Scene {
    pub db: String,
    pub server: ServerProcess,
    pub load: Load,
    cron: onceq_chaos::cron::Setup,
    held: onceq::types::ConsumedMessage,
    client: onceq::Client,
}

impl Scene {
    pub async fn start(cluster: &PatroniCluster, url: String, db: String) -> Scene {
        let server = tokio::task::spawn_blocking(move || {
            ServerProcess::on_postgres(&url, KEY, &["--store-timeout-ms", "3000"])
        })
        .await
        .unwrap();
        let port: u16 = server.url.rsplit(':').next().unwrap().parse().unwrap();
        let cron = onceq_chaos::cron::start(port).await.unwrap();
        let client = onceq::Client::new(&server.url, KEY).unwrap();
        client
            .publish(
                "held",
                &serde_json::json!({"held": true}),
                Default::default(),
            )
            .await
            .unwrap();
        let held = client
            .consume(
                "held",
                onceq::ConsumeOptions {
                    max_messages: 1,
                    visibility_timeout: Some(300),
                    wait_seconds: 0,
                },
            )
            .await
            .unwrap()
            .pop()
            .expect("the held message");
        let load = Load::start(&server.url, KEY);
        load.until_more_acked(30, Duration::from_secs(30)).await;
        let _ = cluster;
        Scene {
            db,
            server,
            load,
            cron,
            held,
            client,
        }
    }

    /// After the fault at `t0`: waits until publishing goes on (30 more
    /// acknowledged), stops the load and checks everything (see the module
    /// doc). Returns what the load saw and the seconds from `t0` to the first
    /// publish acknowledged after the outage began.
    pub async fn finish(self, cluster: &PatroniCluster, t0: Instant, what: &str) -> (Seen, f64) {
        self.load
            .until_more_acked(30, Duration::from_secs(90))
            .await;
        let seen = self.load.stop().await;
        let first_failure = seen
            .answers
            .iter()
            .filter(|a| a.at > t0 && a.status != 200)
            .map(|a| a.at)
            .min();
        let back = first_failure
            .and_then(|f| {
                seen.answers
                    .iter()
                    .filter(|a| a.at > f && a.status == 200)
                    .map(|a| a.at)
                    .min()
            })
            .map_or(0.0, |ok| (ok - t0).as_secs_f64());
        seen.assert_only_retryable_failures(what);
        assert!(
            seen.leases_lost.is_empty(),
            "{what}: acks within their lease answered lease-lost: {:?}",
            seen.leases_lost
        );
        assert!(seen.consumed > 0, "{what}: consumers acked nothing");

        let leader = cluster.wait_for_leader(None, Duration::from_secs(60)).await;
        assert_all_on(cluster, leader, &self.db, &seen.acked, what).await;
        assert_gone(cluster, leader, &self.db, &seen.acked_unanswered, what).await;
        replay(&self.client, &seen.acked, what).await;

        // The lease taken before the fault is still ours: its receipt acks.
        // A 503 means nothing was done (the server may still be moving to
        // the new leader; publishes above retry it by policy, an ack does
        // not), so it is retried for up to a minute, as a client would.
        let give_up = Instant::now() + Duration::from_secs(60);
        let acked = loop {
            match self
                .client
                .ack("held", &self.held.message_id, Some(&self.held.receipt))
                .await
            {
                Err(e @ onceq::Error::Unavailable { .. }) if Instant::now() < give_up => {
                    tokio::time::sleep(e.retry_after().unwrap_or(Duration::from_secs(1))).await;
                }
                other => break other.unwrap(),
            }
        };
        assert!(acked, "{what}: the lease held across the fault was lost");

        // The schedules were made just before the fault, so their first
        // tick may come only after it: wait (bounded) for one to fire, then
        // check that every fired tick published once.
        let give_up = Instant::now() + Duration::from_secs(30);
        let cron = loop {
            let cron = onceq_chaos::cron::check(&self.cron, &cluster.multi_host_url(&self.db))
                .await
                .unwrap();
            if cron.ticks_fired > 0 || Instant::now() >= give_up {
                break cron;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        };
        assert!(
            cron.passed(),
            "{what}: cron ticks not fired once each: {cron:?}"
        );
        eprintln!(
            "patroni {what}: {} publishes acknowledged, {} answered 503; publishing back {back:.1} s \
             after the fault began; {} acked by consumers ({} ack retries); cron: {} ticks, one message each",
            seen.acked.len(),
            seen.unavailable(),
            seen.consumed,
            seen.ack_retries,
            cron.ticks_fired
        );
        drop(self.server);
        (seen, back)
    }
}

/// Every acknowledged publish is on node `leader`: its key with the very
/// message id the client was given (the primary key makes it once).
pub async fn assert_all_on(
    cluster: &PatroniCluster,
    leader: usize,
    db: &str,
    acked: &HashMap<String, String>,
    what: &str,
) {
    let client = onceq_pg::PgConnect::parse(&cluster.node_url(leader, db))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let rows = client
        .query(
            "SELECT k.key, k.message_id FROM onceq_dedupe_keys k \
             JOIN onceq_queues q ON q.id = k.queue_id WHERE q.name = $1",
            &[&load::QUEUE],
        )
        .await
        .unwrap();
    let stored: HashMap<String, String> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    for (key, id) in acked {
        assert_eq!(
            stored.get(key),
            Some(id),
            "{what}: acknowledged publish {key} is not on the new leader"
        );
    }
}

/// The messages whose ack was answered 503 and then "not held" were acked
/// by that first attempt: none is left in the queue.
async fn assert_gone(
    cluster: &PatroniCluster,
    leader: usize,
    db: &str,
    ids: &[String],
    what: &str,
) {
    let client = onceq_pg::PgConnect::parse(&cluster.node_url(leader, db))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let left: i64 = client
        .query_one(
            "SELECT count(*) FROM onceq_messages WHERE id = ANY($1)",
            &[&ids],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(
        left, 0,
        "{what}: acks answered 503 then not-held left their messages: {ids:?}"
    );
}

/// The same keys again are replays of the same messages.
async fn replay(client: &onceq::Client, acked: &HashMap<String, String>, what: &str) {
    for (key, id) in acked.iter().take(20) {
        let again = client
            .publish(
                load::QUEUE,
                &serde_json::json!({"key": key}),
                onceq::PublishOptions {
                    idempotency_key: Some(key.clone()),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        assert!(again.replay, "{what}: {key} was stored again");
        assert_eq!(&again.message.message_id, id, "{what}: {key}");
    }
}

/// Runs `body` on a runtime of its own (the cluster outlives it).
pub fn run<F: std::future::Future<Output = ()>>(body: F) {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(body);
}
