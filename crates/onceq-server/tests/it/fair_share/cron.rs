//! Cron: a hostile project with 1 000 every-second schedules beside a
//! victim project with one; the victim's runs fire within [`VICTIM_BOUND`]
//! of their tick, no tick skipped, on the system clock (lateness is what
//! is measured). The hostile project's runs are held to its firing rate;
//! its 1 001st schedule is refused. And, on a manual clock, one pass fires
//! a throttled project's burst and every other project's due run.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use onceq_server::{ServerConfig, clock::Clock, maintenance::cron_firing};
use serde_json::{Value, json};

use crate::{
    both,
    harness::{Backend, TestServer},
};

both!(a_project_with_many_schedules_does_not_delay_another);
both!(schedules_past_the_project_cap_are_refused);
both!(a_pass_serves_every_project_before_a_throttled_one);

/// The latest a victim's run may fire after its tick.
const VICTIM_BOUND: Duration = Duration::from_millis(1500);
const HOSTILE_SCHEDULES: usize = 1000;

fn every_second(queue: &str) -> Value {
    json!({"queue": queue, "cron_expr": "* * * * * *", "payload": {"tick": true}})
}

/// Creates `n` schedules with `key`.
async fn schedules(s: &TestServer, key: &str, body: Value, n: usize) {
    for _ in 0..n {
        s.post_as(key, "/v1/cron/create", body.clone()).await.ok();
    }
}

async fn a_project_with_many_schedules_does_not_delay_another(b: Backend) {
    let s = TestServer::start_with_clock(b, ServerConfig::default(), Clock::System).await;
    s.post("/v1/queue/create", json!({"name": "ticks"}))
        .await
        .ok();
    s.post_as(&s.other_key, "/v1/queue/create", json!({"name": "ticks"}))
        .await
        .ok();
    schedules(&s, &s.key, every_second("ticks"), HOSTILE_SCHEDULES).await;
    // Let the hostile backlog build up before the victim's schedule starts.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let victim = s
        .post_as(&s.other_key, "/v1/cron/create", every_second("ticks"))
        .await;
    victim.ok();
    let id = victim.data()["job_id"].as_str().unwrap().to_owned();
    tokio::time::sleep(Duration::from_secs(6)).await;
    let job = s.get_as(&s.other_key, &format!("/v1/cron/get/{id}")).await;
    job.ok();
    let runs = job.data()["runs"].as_array().unwrap().clone();
    let lateness: Vec<SignedDuration> = runs
        .iter()
        .map(|r| {
            let at: Timestamp = r["scheduled_at"].as_str().unwrap().parse().unwrap();
            let fired: Timestamp = r["fired_at"].as_str().unwrap().parse().unwrap();
            fired.duration_since(at)
        })
        .collect();
    let ticks: Vec<Timestamp> = runs
        .iter()
        .map(|r| r["scheduled_at"].as_str().unwrap().parse().unwrap())
        .collect();
    let hostile_runs: i64 = {
        let list = s.get("/v1/cron/list").await;
        list.ok();
        list.data()["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["run_count"].as_i64().unwrap_or(0))
            .sum()
    };
    let worst = lateness.iter().max().copied().unwrap_or_default();
    eprintln!(
        "fair_share cron ({b:?}): {HOSTILE_SCHEDULES} hostile every-second schedules, {hostile_runs} hostile runs fired in ~8 s; victim: {} runs in 6 s, worst {worst:?} late, lateness {lateness:?}",
        runs.len()
    );
    assert!(
        runs.len() >= 4,
        "the victim's schedule fired {} times in 6 s",
        runs.len()
    );
    assert!(
        worst < SignedDuration::try_from(VICTIM_BOUND).unwrap(),
        "a victim run fired {worst:?} after its tick: {lateness:?}"
    );
    // Newest first, one second apart: no tick skipped.
    for pair in ticks.windows(2) {
        assert_eq!(
            pair[0].duration_since(pair[1]),
            SignedDuration::from_secs(1),
            "a victim tick was skipped: {ticks:?}"
        );
    }
}

async fn schedules_past_the_project_cap_are_refused(b: Backend) {
    let config = ServerConfig {
        cron_max_schedules_per_project: 3,
        ..ServerConfig::default()
    };
    let s = TestServer::start_with(b, config).await;
    s.post("/v1/queue/create", json!({"name": "q"})).await.ok();
    s.post_as(&s.other_key, "/v1/queue/create", json!({"name": "q"}))
        .await
        .ok();
    let mut keyed = every_second("q");
    keyed["idempotency_key"] = json!("first");
    let first = s.post("/v1/cron/create", keyed.clone()).await;
    first.ok();
    schedules(&s, &s.key, every_second("q"), 2).await;
    let refused = s.post("/v1/cron/create", every_second("q")).await;
    assert_eq!(refused.status, 400, "{:?}", refused.body);
    assert_eq!(refused.body["error"]["code"], "INVALID_PARAMS");
    let message = refused.body["error"]["message"].as_str().unwrap();
    assert!(message.contains("3 cron schedules"), "{message}");
    assert!(
        refused.body["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("--cron-max-schedules-per-project"),
        "{:?}",
        refused.body
    );
    let list = s.get("/v1/cron/list").await;
    assert_eq!(
        list.data()["items"].as_array().unwrap().len(),
        3,
        "nothing stored"
    );
    // The create repeated with its key: answered with the first schedule.
    let again = s.post("/v1/cron/create", keyed).await;
    again.ok();
    assert_eq!(again.data()["job_id"], first.data()["job_id"]);
    // Another project's cap is its own.
    s.post_as(&s.other_key, "/v1/cron/create", every_second("q"))
        .await
        .ok();
    // A deleted schedule frees its place.
    let id = first.data()["job_id"].as_str().unwrap();
    s.send(
        reqwest::Method::DELETE,
        &format!("/v1/cron/delete/{id}"),
        None,
        Some(&s.key),
    )
    .await
    .ok();
    s.post("/v1/cron/create", every_second("q")).await.ok();
}

async fn a_pass_serves_every_project_before_a_throttled_one(b: Backend) {
    let config = ServerConfig {
        cron_project_runs_per_second: 5,
        // The server's own loop sleeps (until the ticks, a manual minute
        // away): only this test's passes fire, and spend the buckets.
        cron_poll_interval: Duration::from_secs(3600),
        ..ServerConfig::default()
    };
    let s = TestServer::start_with(b, config).await;
    s.post("/v1/queue/create", json!({"name": "q"})).await.ok();
    s.post_as(&s.other_key, "/v1/queue/create", json!({"name": "q"}))
        .await
        .ok();
    let every_minute = json!({"queue": "q", "cron_expr": "* * * * *", "payload": {}});
    schedules(&s, &s.key, every_minute.clone(), 60).await;
    let victim = s
        .post_as(&s.other_key, "/v1/cron/create", every_minute)
        .await;
    victim.ok();
    s.clock.advance(SignedDuration::from_secs(60));
    cron_firing::pass(&s.state).await.unwrap();
    let fired = |list: crate::answer::Res| -> i64 {
        list.data()["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["run_count"].as_i64().unwrap())
            .sum()
    };
    // (The server's own loop may pass at the same moment, woken by the
    // last create: it spends the same buckets, so the bounds hold.)
    let hostile = fired(s.get("/v1/cron/list").await);
    let theirs = fired(s.get_as(&s.other_key, "/v1/cron/list").await);
    assert_eq!(theirs, 1, "the victim's run fired in the pass");
    assert!(
        (1..=5).contains(&hostile),
        "the hostile project's burst at most: {hostile}"
    );
    assert!(s.state.cron_fairness.deferred() >= 1, "the rest held back");
    // A second later the hostile project gets its next second's worth.
    s.clock.advance(SignedDuration::from_secs(1));
    cron_firing::pass(&s.state).await.unwrap();
    let later = fired(s.get("/v1/cron/list").await);
    assert!(later > hostile && later <= 10, "{hostile} then {later}");
}
