//! Behind PgBouncer in transaction pooling mode (Debian's, 1.18): two
//! `onceq serve` and the CLI share one database through the pooler, with
//! fewer server connections than clients. Eight clients publish, long-poll
//! and ack at once: no call answers 5xx, nothing is lost or doubled, and a
//! key revoked through the pooler stops working on both servers within the
//! stated bound.

use std::{
    collections::HashSet,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use onceq::{ConsumeOptions, PublishOptions};
use onceq_testdb::{TestCluster, pgbouncer::PgBouncer};

use crate::process::{ServerProcess, run_ok};

const CLIENTS: usize = 8;
const PER_CLIENT: usize = 40;
/// docs/security.md's bound on revocation behind a pooler: the servers
/// cache keys there too, and poll the keys' change count.
const REVOKED_WITHIN: Duration = Duration::from_millis(1500);

#[test]
fn publish_consume_ack_long_poll_and_revoke_through_pgbouncer() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let pg = rt.block_on(TestCluster::start());
    let db = rt.block_on(pg.create_database());
    let bouncer = rt.block_on(PgBouncer::start(&pg, 4));
    let url = format!("{}?pgbouncer=transaction", bouncer.url_of(&db.name));
    let servers: Vec<ServerProcess> = (0..2)
        .map(|_| ServerProcess::on_postgres(&url, "bouncer-key", &[]))
        .collect();
    let clients: Vec<onceq::Client> = servers
        .iter()
        .map(|s| {
            onceq::Client::new(&s.url, "bouncer-key")
                .unwrap()
                .with_retry(onceq::RetryPolicy {
                    max_attempts: 1,
                    base_delay: Duration::from_millis(1),
                    max_delay: Duration::from_millis(1),
                })
        })
        .collect();

    rt.block_on(async {
        // A long poll on one server is answered by a publish on the other
        // (the queue made by a first publish, taken at once).
        clients[1]
            .publish(
                "wake",
                &serde_json::json!({"n": -1}),
                PublishOptions::default(),
            )
            .await
            .unwrap();
        let first = clients[0].consume("wake", take(1, 0)).await.unwrap();
        assert_eq!(first.len(), 1);
        let waiting = {
            let c = clients[0].clone();
            tokio::spawn(async move { c.consume("wake", take(1, 10)).await })
        };
        tokio::time::sleep(Duration::from_millis(300)).await;
        clients[1]
            .publish(
                "wake",
                &serde_json::json!({"n": 0}),
                PublishOptions::default(),
            )
            .await
            .unwrap();
        let got = waiting.await.unwrap().unwrap();
        assert_eq!(got.len(), 1, "the long poll got nothing");

        // Eight clients at once, on both servers: every call must succeed.
        let done = Arc::new(Mutex::new(HashSet::new()));
        let mut tasks = Vec::new();
        for i in 0..CLIENTS {
            let c = clients[i % 2].clone();
            let done = done.clone();
            tasks.push(tokio::spawn(async move { work(c, i, done).await }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        let mut left = Vec::new();
        loop {
            let got = clients[0].consume("jobs", take(10, 0)).await.unwrap();
            if got.is_empty() {
                break;
            }
            left.extend(got);
        }
        assert!(left.is_empty(), "{} messages left unacked", left.len());
        assert_eq!(
            done.lock().unwrap().len(),
            CLIENTS * PER_CLIENT,
            "lost or doubled work"
        );
    });

    // Keys made and revoked by the CLI, through the pooler too.
    let store = ["--database-url", url.as_str()];
    let key = run_ok(
        &[
            &[
                "keys",
                "create",
                "--project",
                "default",
                "--label",
                "revoke-me",
            ][..],
            &store,
        ]
        .concat(),
        &[],
    );
    let key = key.trim().to_owned();
    let listed: serde_json::Value = serde_json::from_str(&run_ok(
        &[&["keys", "list", "--json"][..], &store].concat(),
        &[],
    ))
    .unwrap();
    let id = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["label"] == "revoke-me")
        .map(|k| k["key_id"].as_str().unwrap().to_owned())
        .unwrap();
    rt.block_on(async {
        for s in &servers {
            // Twice: the second answer comes from the server's key cache.
            for _ in 0..2 {
                assert_eq!(status(&s.url, &key).await, 200, "the new key works");
            }
        }
    });
    run_ok(&[&["keys", "revoke", &id][..], &store].concat(), &[]);
    // The revoke had committed when the CLI exited: from the bound on,
    // every request must be refused, the first one included.
    let revoked_at = Instant::now();
    rt.block_on(async {
        let mut first_refused = Vec::new();
        for s in &servers {
            while revoked_at.elapsed() < REVOKED_WITHIN && status(&s.url, &key).await != 401 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            first_refused.push(revoked_at.elapsed());
        }
        eprintln!("pgbouncer: revocation seen by the servers after {first_refused:?}");
        tokio::time::sleep_until((revoked_at + REVOKED_WITHIN).into()).await;
        for s in &servers {
            assert_eq!(
                status(&s.url, &key).await,
                401,
                "a revoked key still worked on {} {REVOKED_WITHIN:?} after its revoke",
                s.url
            );
        }
    });
    for s in servers {
        let (_, logs) = s.terminate();
        let bad: Vec<_> = logs
            .iter()
            .filter(|l| l.contains("prepared statement"))
            .collect();
        assert!(bad.is_empty(), "{bad:#?}");
    }
}

/// Publishes its share, then consumes and acks until it has handled as
/// many messages as it published (any client's); every call must succeed.
async fn work(c: onceq::Client, i: usize, done: Arc<Mutex<HashSet<String>>>) {
    for n in 0..PER_CLIENT {
        let key = format!("{i}-{n}");
        c.publish(
            "jobs",
            &serde_json::json!({"key": key}),
            PublishOptions {
                idempotency_key: Some(key.clone()),
                ..Default::default()
            },
        )
        .await
        .unwrap_or_else(|e| panic!("publish {key}: {e}"));
    }
    let mut handled = 0;
    let deadline = Instant::now() + Duration::from_secs(60);
    while handled < PER_CLIENT && Instant::now() < deadline {
        let got = c
            .consume("jobs", take(5, 1))
            .await
            .unwrap_or_else(|e| panic!("consume: {e}"));
        for m in got {
            let key = m.payload.get().to_owned();
            c.ack("jobs", &m.message_id, Some(&m.receipt))
                .await
                .unwrap_or_else(|e| panic!("ack: {e}"));
            assert!(done.lock().unwrap().insert(key), "a message handled twice");
            handled += 1;
        }
    }
}

/// Consume options: at most `max` messages, a long poll of `wait` seconds.
fn take(max: u32, wait: u32) -> ConsumeOptions {
    ConsumeOptions {
        max_messages: max,
        wait_seconds: wait,
        ..Default::default()
    }
}

/// The status of `GET /v1/queue/list` with `key`.
async fn status(base: &str, key: &str) -> u16 {
    reqwest::Client::new()
        .get(format!("{base}/v1/queue/list"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}
