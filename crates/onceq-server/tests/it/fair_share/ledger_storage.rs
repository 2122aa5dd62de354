//! Storage per key is bounded (issue 26, part 5): a hostile project's
//! keyed calls, no-ops with new keys or changes echoing a large schedule,
//! cannot grow the call ledger past its per-project bound (429
//! `RATE_LIMITED` past it, nothing done), and a no-op's answer is kept as
//! a small mark; meanwhile a victim project's keyed calls still store and
//! replay.

use jiff::SignedDuration;
use onceq_server::{ServerConfig, config::LedgerLimits};
use reqwest::Method;
use serde_json::{Value, json};

use crate::both;
use crate::harness::{Backend, TestServer};
use crate::idempotency::{Who, call, call_as};

both!(hostile_no_op_keyed_calls_stay_in_bound_while_the_victim_replays);
both!(hostile_large_answers_stop_at_the_byte_bound);

/// The hostile schedule's payload: 250 KB, as in the issue.
fn big_payload() -> Value {
    json!({ "blob": "x".repeat(250_000) })
}

async fn hostile_schedule(s: &TestServer) -> String {
    s.post("/v1/queue/create", json!({"name": "h"})).await.ok();
    let job = crate::cron::create(
        s,
        json!({"cron_expr": "0 3 * * *", "queue": "h", "payload": big_payload()}),
    )
    .await;
    job["job_id"].as_str().unwrap().to_owned()
}

/// What the call ledger holds for `project` now.
async fn usage(s: &TestServer, project: &str) -> onceq_store::LedgerUsage {
    s.state.store().ledger_usage(project).await.unwrap()
}

fn victim(s: &TestServer) -> Who<'_> {
    Who {
        key: &s.other_key,
        project: "beta",
    }
}

async fn hostile_no_op_keyed_calls_stay_in_bound_while_the_victim_replays(b: Backend) {
    const MAX: u32 = 40;
    let config = ServerConfig {
        ledger: LedgerLimits {
            max_entries: MAX,
            max_bytes: 1024 * 1024,
        },
        ..ServerConfig::default()
    };
    let s = TestServer::start_with(b, config).await;
    let job = hostile_schedule(&s).await;
    let pause = format!("/v1/cron/pause/{job}");
    s.post(&pause, json!({})).await.ok();

    // 400 no-op pauses, each with a new key (the 88 MB).
    let (mut stored, mut refused) = (0, 0);
    for n in 0..400 {
        let r = call(&s, Method::POST, &pause, None, &format!("noop-{n}")).await;
        match r.status {
            200 => {
                assert_eq!(r.data()["paused"], true);
                assert_eq!(r.data()["payload"], big_payload(), "the answer is whole");
                stored += 1;
            }
            _ => {
                let msg = r.err(429, "RATE_LIMITED");
                assert!(msg.contains("call ledger is full"), "{msg}");
                assert!(msg.contains("nothing was done"), "{msg}");
                let after: u64 = r.headers["retry-after"].to_str().unwrap().parse().unwrap();
                assert!(after > 3600, "until the first key's window ends: {after}");
                assert!(
                    r.body["error"]["hint"]
                        .as_str()
                        .unwrap()
                        .contains("--ledger-max-entries")
                );
                refused += 1;
            }
        }
    }
    assert_eq!((stored, refused), (MAX, 400 - MAX));
    let hostile = usage(&s, "alpha").await;
    assert_eq!(
        hostile.entries,
        u64::from(MAX),
        "refused calls keep nothing"
    );
    assert!(
        hostile.bytes <= u64::from(MAX) * 8,
        "no-op answers are kept as a mark, not the 250 KB schedule: {} bytes",
        hostile.bytes
    );

    // A kept no-op still replays: the schedule as it is, marked a replay.
    let again = call(&s, Method::POST, &pause, None, "noop-0").await;
    again.ok();
    assert_eq!(again.body["metadata"]["idempotent_replay"], true);
    assert_eq!(again.headers["idempotent-replayed"], "true");
    assert_eq!(again.data()["job_id"], job.as_str());
    assert_eq!(again.data()["payload"], big_payload());
    // …reuse with another request is still caught, and the same call
    // without a key is served (the bound is on what is kept).
    s.post(&pause, json!({})).await.ok();
    let reused = call(&s, Method::POST, "/v1/cron/pause/other", None, "noop-1").await;
    reused.err(422, "IDEMPOTENCY_KEY_REUSED");

    // The victim, beside the full hostile: its keyed calls store and replay.
    for n in 0..5 {
        let key = format!("v-{n}");
        let body = json!({"name": format!("v-{n}")});
        let first = call_as(
            &s,
            victim(&s),
            Method::POST,
            "/v1/queue/create",
            Some(body.clone()),
            &key,
        )
        .await;
        first.ok();
        assert_eq!(first.body["metadata"]["idempotent_replay"], false);
        let replay = call_as(
            &s,
            victim(&s),
            Method::POST,
            "/v1/queue/create",
            Some(body),
            &key,
        )
        .await;
        replay.ok();
        assert_eq!(replay.body["metadata"]["idempotent_replay"], true);
        assert_eq!(replay.data(), first.data());
    }
    assert_eq!(usage(&s, "beta").await.entries, 5);

    // Past the window the hostile's entries end and its room comes back.
    s.clock.advance(SignedDuration::from_hours(25));
    onceq_server::maintenance::purger::pass(&s.state)
        .await
        .unwrap();
    assert_eq!(usage(&s, "alpha").await.entries, 0);
    call(&s, Method::POST, &pause, None, "later").await.ok();
}

async fn hostile_large_answers_stop_at_the_byte_bound(b: Backend) {
    const MAX_BYTES: u64 = 600_000;
    let config = ServerConfig {
        ledger: LedgerLimits {
            max_entries: 10_000,
            max_bytes: MAX_BYTES,
        },
        ..ServerConfig::default()
    };
    let s = TestServer::start_with(b, config).await;
    let job = hostile_schedule(&s).await;
    // Each update changes the schedule, so its whole answer (the 250 KB
    // payload) is kept, until the project's answers reach the bound.
    let mut stored = 0;
    for n in 0..20 {
        let body = json!({"job_id": job, "name": format!("n-{n}")});
        let r = call(
            &s,
            Method::POST,
            "/v1/cron/update",
            Some(body),
            &format!("u-{n}"),
        )
        .await;
        if r.status == 200 {
            stored += 1;
        } else {
            let msg = r.err(429, "RATE_LIMITED");
            assert!(msg.contains(&format!("{MAX_BYTES} bytes")), "{msg}");
        }
    }
    assert_eq!(stored, 3, "kept until the answers reach 600 000 bytes");
    let hostile = usage(&s, "alpha").await;
    assert!(
        hostile.bytes < MAX_BYTES + 300_000,
        "over by one answer at most: {}",
        hostile.bytes
    );
    // The victim's room is its own.
    let r = call_as(
        &s,
        victim(&s),
        Method::POST,
        "/v1/queue/create",
        Some(json!({"name": "v"})),
        "v",
    )
    .await;
    r.ok();
    assert_eq!(usage(&s, "beta").await.entries, 1);
}
