//! The clock-skew bound (docs/guarantees.md, "Clocks"): lease ends and
//! delays are computed from the clock of the server that handled the call,
//! so between servers sharing a database whose clocks are `SKEW` apart a
//! lease ends up to `SKEW` early or late, and a delay likewise — and no
//! more. Two servers on one store (on PostgreSQL, each with a store of its
//! own, as two hosts), with injected clocks `SKEW` apart that the test moves
//! together: "true time" is the clock behind plus what the test advanced.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use onceq_server::{ServerConfig, maintenance::lease_reaper};
use serde_json::{Value, json};

use crate::{
    both,
    harness::{Backend, StoreHandle, TestServer, fresh_store},
};

both!(a_skew_shifts_lease_ends_and_delays_by_at_most_the_skew);

/// How far the second server's clock is ahead of the first's.
const SKEW: i64 = 30;
/// The lease asked for.
const LEASE: i64 = 60;

/// `behind` at T0 and `ahead` at T0 + SKEW, on one store; their lease
/// reapers run only when the test runs them.
async fn skewed(b: Backend) -> (StoreHandle, TestServer, TestServer) {
    let handle = fresh_store(b).await;
    let config = || ServerConfig {
        lease_reap_interval: Duration::from_secs(3600),
        ..ServerConfig::default()
    };
    let t0: Timestamp = TestServer::T0.parse().unwrap();
    let behind = TestServer::on_store_at(handle.store.clone(), config(), t0).await;
    let second = match &handle.database_url {
        Some(url) => onceq_store::open(Some(url), std::path::Path::new("unused"))
            .await
            .unwrap(),
        None => handle.store.clone(),
    };
    let ahead = TestServer::on_store_at(
        second,
        config(),
        t0.checked_add(SignedDuration::from_secs(SKEW)).unwrap(),
    )
    .await;
    (handle, behind, ahead)
}

/// True time passes by `secs` on both servers.
fn pass(servers: [&TestServer; 2], secs: i64) {
    for s in servers {
        s.clock.advance(SignedDuration::from_secs(secs));
    }
}

async fn consume(s: &TestServer, queue: &str, key: &str) -> Vec<Value> {
    let r = s
        .post_as(
            key,
            "/v1/queue/consume",
            json!({"queue": queue, "visibility_timeout": LEASE}),
        )
        .await;
    r.ok().data()["items"].as_array().unwrap().clone()
}

/// Runs `s`'s lease reaper, then consumes there: the message back, or none.
async fn reap_and_consume(s: &TestServer, queue: &str, key: &str) -> Vec<Value> {
    lease_reaper::pass(&s.state).await.unwrap();
    consume(s, queue, key).await
}

async fn a_skew_shifts_lease_ends_and_delays_by_at_most_the_skew(b: Backend) {
    let (_handle, behind, ahead) = skewed(b).await;
    let both = [&behind, &ahead];
    // Keys live in the shared database: one works on both servers.
    let key = behind.key.clone();
    let ts = |v: &Value| v.as_str().unwrap().parse::<Timestamp>().unwrap();

    // A lease granted by the server behind ends by its clock: the server
    // ahead returns it SKEW early in true time, not earlier.
    behind.publish("early", json!(1)).await;
    let granted = consume(&behind, "early", &key).await;
    assert_eq!(
        ts(&granted[0]["lease_expires_at"]),
        behind
            .clock
            .now()
            .checked_add(SignedDuration::from_secs(LEASE))
            .unwrap(),
        "the lease ends by the granting server's clock"
    );
    pass(both, LEASE - SKEW - 1);
    assert!(reap_and_consume(&ahead, "early", &key).await.is_empty());
    pass(both, 1);
    let back = reap_and_consume(&ahead, "early", &key).await;
    assert_eq!(back.len(), 1, "returned LEASE - SKEW after the grant");
    assert_eq!(back[0]["delivery_count"], 2);

    // A lease granted by the server ahead: the server behind returns it
    // SKEW late, not later.
    ahead.publish("late", json!(2)).await;
    let granted = consume(&ahead, "late", &key).await;
    assert_eq!(granted.len(), 1);
    pass(both, LEASE + SKEW - 1);
    assert!(reap_and_consume(&behind, "late", &key).await.is_empty());
    pass(both, 1);
    let back = reap_and_consume(&behind, "late", &key).await;
    assert_eq!(back.len(), 1, "returned LEASE + SKEW after the grant");

    // A delay set by the server ahead is seen by the one behind SKEW late.
    let r = ahead
        .post(
            "/v1/queue/publish",
            json!({"queue": "delayed", "payload": 3, "delay_seconds": LEASE}),
        )
        .await;
    r.ok();
    pass(both, LEASE + SKEW - 1);
    assert!(consume(&behind, "delayed", &key).await.is_empty());
    pass(both, 1);
    assert_eq!(consume(&behind, "delayed", &key).await.len(), 1);
}
