//! Each cron run is published once across two servers on one PostgreSQL
//! database firing at the same moment, and across a server killed between
//! publishing a run and advancing its schedule (then restarted). The
//! servers' clocks are driven by the test.

use std::collections::{BTreeMap, HashSet};

use jiff::SignedDuration;
use onceq_server::maintenance::cron_firing;
use serde_json::json;

use crate::{
    both,
    cron::{create, drain},
    harness::{Backend, TestServer, fresh_store},
};

both!(a_run_half_fired_before_a_crash_is_a_replay_after_restart);
both!(ticks_missed_while_no_server_ran_fire_once_on_restart);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_servers_on_one_database_publish_each_tick_once() {
    let (_db, a, b) = TestServer::two_on_one_database(Default::default).await;
    a.post("/v1/queue/create", json!({"name": "ticks"}))
        .await
        .ok();
    const JOBS: usize = 4;
    const TICKS: usize = 15;
    let mut ids = Vec::new();
    for i in 0..JOBS {
        let j = create(
            &a,
            json!({"cron_expr": "*/10 * * * * *", "queue": "ticks", "payload": {"job": i}}),
        )
        .await;
        ids.push(j["job_id"].as_str().unwrap().to_owned());
    }
    for _ in 0..TICKS {
        for s in [&a, &b] {
            s.clock.advance(SignedDuration::from_secs(10));
        }
        // Both servers fire the tick at once, twice each.
        let (x, y, z, w) = tokio::join!(
            cron_firing::pass(&a.state),
            cron_firing::pass(&b.state),
            cron_firing::pass(&b.state),
            cron_firing::pass(&a.state),
        );
        for r in [x, y, z, w] {
            r.unwrap();
        }
    }
    let got = drain(&a, "ticks").await;
    let keys: Vec<String> = got
        .iter()
        .map(|m| m["idempotency_key"].as_str().unwrap().to_owned())
        .collect();
    let unique: HashSet<_> = keys.iter().collect();
    assert_eq!(
        unique.len(),
        keys.len(),
        "a tick was published twice: {keys:?}"
    );
    assert_eq!(got.len(), JOBS * TICKS, "a tick was lost");
    let mut per_job: BTreeMap<&str, usize> = BTreeMap::new();
    for key in &keys {
        let id = key.split(':').nth(1).unwrap();
        *per_job.entry(id).or_default() += 1;
    }
    for id in &ids {
        assert_eq!(per_job.get(id.as_str()), Some(&TICKS), "{id}");
        let j = b.get(&format!("/v1/cron/get/{id}")).await;
        j.ok();
        assert_eq!(j.data()["run_count"], TICKS);
        let runs = j.data()["runs"].as_array().unwrap();
        let ticks: HashSet<_> = runs.iter().map(|r| r["scheduled_at"].clone()).collect();
        assert_eq!(ticks.len(), runs.len(), "one run record per tick");
        assert_eq!(runs.len(), TICKS);
    }
}

/// A server that published a run and died before advancing its schedule
/// (the state a SIGKILL there leaves: the run's message stored under its
/// dedupe key, the schedule still due) is restarted: the run fires again as
/// a replay and is recorded with the first firing's message.
async fn a_run_half_fired_before_a_crash_is_a_replay_after_restart(b: Backend) {
    let store = fresh_store(b).await;
    let first = TestServer::on_store(store.store.clone(), Default::default()).await;
    first
        .post("/v1/queue/create", json!({"name": "ticks"}))
        .await
        .ok();
    let j = create(
        &first,
        json!({"cron_expr": "* * * * *", "queue": "ticks", "payload": {"p": 1}}),
    )
    .await;
    let id = j["job_id"].as_str().unwrap().to_owned();
    let tick = j["next_run_at"].as_str().unwrap().to_owned();
    // Step 1 of a firing, done; step 2 never happens.
    let published = first
        .post(
            "/v1/queue/publish",
            json!({"queue": "ticks", "payload": {"p": 1}, "idempotency_key": format!("cron:{id}:{tick}")}),
        )
        .await;
    published.ok();
    first.stop().await;

    let start: jiff::Timestamp = TestServer::T0.parse().unwrap();
    let restarted = TestServer::on_store_at(
        store.store.clone(),
        Default::default(),
        start + SignedDuration::from_secs(65),
    )
    .await;
    cron_firing::pass(&restarted.state).await.unwrap();
    let got = drain(&restarted, "ticks").await;
    assert_eq!(got.len(), 1, "the second firing of the run stored nothing");
    let r = restarted.get(&format!("/v1/cron/get/{id}")).await;
    r.ok();
    let runs = r.data()["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["scheduled_at"], tick);
    assert_eq!(runs[0]["message_id"], published.data()["message_id"]);
    assert_eq!(r.data()["next_run_at"], "2026-07-26T12:02:00Z");
}

/// No server runs for an hour: the first one back fires the schedule once.
async fn ticks_missed_while_no_server_ran_fire_once_on_restart(b: Backend) {
    let store = fresh_store(b).await;
    let first = TestServer::on_store(store.store.clone(), Default::default()).await;
    first
        .post("/v1/queue/create", json!({"name": "ticks"}))
        .await
        .ok();
    let j = create(
        &first,
        json!({"cron_expr": "*/5 * * * *", "queue": "ticks"}),
    )
    .await;
    let id = j["job_id"].as_str().unwrap().to_owned();
    first.stop().await;

    let start: jiff::Timestamp = TestServer::T0.parse().unwrap();
    let back = TestServer::on_store_at(
        store.store.clone(),
        Default::default(),
        start + SignedDuration::from_secs(3600),
    )
    .await;
    cron_firing::pass(&back.state).await.unwrap();
    cron_firing::pass(&back.state).await.unwrap();
    assert_eq!(drain(&back, "ticks").await.len(), 1);
    let r = back.get(&format!("/v1/cron/get/{id}")).await;
    assert_eq!(r.data()["runs"][0]["scheduled_at"], "2026-07-26T12:05:00Z");
    assert_eq!(r.data()["next_run_at"], "2026-07-26T13:05:00Z");
}
