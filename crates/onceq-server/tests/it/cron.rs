//! Cron schedules over HTTP: every endpoint and its refusals, firing (one
//! message per tick, missed ticks collapsed, one-shots, max_runs, pause,
//! overlap skip), daylight saving in a real zone. Time is the servers'
//! manual clock; a test fires due runs with `cron_firing::pass` (each
//! server's own loop may fire them too: the result is the same).
//! Exactly-once across two servers and a restart: `cron_servers`.

use jiff::{SignedDuration, Timestamp};
use onceq_server::maintenance::cron_firing;
use serde_json::{Value, json};

use crate::{
    both,
    harness::{Backend, TestServer},
};

both!(create_get_list_delete);
both!(refusals_name_the_field_with_a_hint_and_store_nothing);
both!(create_with_an_idempotency_key_answers_the_first_job);
both!(each_tick_publishes_once_with_its_dedupe_key);
both!(missed_ticks_fire_once);
both!(one_shot_and_max_runs_end_the_schedule);
both!(paused_jobs_do_not_fire_and_resume_skips_missed_ticks);
both!(overlap_skip_waits_for_the_previous_message);
both!(update_changes_the_schedule);
both!(daylight_saving_in_a_real_zone);
both!(discovery_and_openapi_list_the_cron_endpoints);
both!(other_projects_cannot_see_a_job);

/// A schedule's API record, created on `s` (its queue must exist).
pub async fn create(s: &TestServer, body: Value) -> Value {
    let r = s.post("/v1/cron/create", body).await;
    r.ok();
    r.data().clone()
}

/// Moves the clock and fires what is due.
pub async fn tick(s: &TestServer, secs: i64) {
    s.clock.advance(SignedDuration::from_secs(secs));
    cron_firing::pass(&s.state).await.unwrap();
}

/// Every message the queue holds (consumed with a long lease, so each is
/// seen once).
pub async fn drain(s: &TestServer, queue: &str) -> Vec<Value> {
    let mut all = Vec::new();
    loop {
        let r = s
            .post(
                "/v1/queue/consume",
                json!({"queue": queue, "max_messages": 10, "visibility_timeout": 43200}),
            )
            .await;
        r.ok();
        let items = r.data()["items"].as_array().unwrap().clone();
        if items.is_empty() {
            return all;
        }
        all.extend(items);
    }
}

async fn job(s: &TestServer, id: &str) -> Value {
    let r = s.get(&format!("/v1/cron/get/{id}")).await;
    r.ok();
    r.data().clone()
}

fn at(offset_secs: i64) -> String {
    let t0: Timestamp = TestServer::T0.parse().unwrap();
    (t0 + SignedDuration::from_secs(offset_secs)).to_string()
}

async fn queue(s: &TestServer, name: &str) {
    s.post("/v1/queue/create", json!({"name": name})).await.ok();
}

async fn create_get_list_delete(b: Backend) {
    let s = TestServer::in_process(b).await;
    queue(&s, "reports").await;
    let a = create(
        &s,
        json!({"name": "every five", "cron_expr": "*/5 * * * *", "queue": "reports",
               "payload": {"kind": "report"}, "headers": {"X-Source": "cron"},
               "max_runs": 3, "overlap_policy": "skip"}),
    )
    .await;
    let id = a["job_id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("cron_"), "{a}");
    assert_eq!(a["name"], "every five");
    assert_eq!(a["cron_expr"], "*/5 * * * *");
    assert_eq!(a["run_at"], Value::Null);
    assert_eq!(a["timezone"], "UTC", "the default zone");
    assert_eq!(
        a["next_run_at"],
        at(300),
        "T0 is 12:00:00; the first tick 12:05"
    );
    assert_eq!(a["queue"], "reports");
    assert_eq!(a["task"], Value::Null);
    assert_eq!(a["payload"], json!({"kind": "report"}));
    assert_eq!(
        a["headers"],
        json!({"x-source": "cron"}),
        "names lower-cased"
    );
    assert_eq!(a["max_runs"], 3);
    assert_eq!(a["overlap_policy"], "skip");
    assert_eq!(a["run_count"], 0);
    assert_eq!(a["paused"], false);
    assert_eq!(a["created_at"], at(0));
    assert_eq!(a["runs"], json!([]));

    let once = create(
        &s,
        json!({"run_at": "2026-07-27T09:30:00+02:00", "timezone": "Europe/Paris", "queue": "reports"}),
    )
    .await;
    assert_eq!(once["run_at"], "2026-07-27T07:30:00Z");
    assert_eq!(once["next_run_at"], "2026-07-27T07:30:00Z");
    assert_eq!(once["payload"], json!({}), "the default payload");
    assert_eq!(once["overlap_policy"], "allow");

    assert_eq!(job(&s, &id).await, a);
    let list = s.get("/v1/cron/list").await;
    list.ok();
    let ids: Vec<_> = list.data()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["job_id"].clone())
        .collect();
    assert_eq!(ids, vec![a["job_id"].clone(), once["job_id"].clone()]);

    let r = s
        .send(
            reqwest::Method::DELETE,
            &format!("/v1/cron/delete/{id}"),
            None,
            Some(&s.key),
        )
        .await;
    r.ok();
    assert_eq!(r.data(), &json!({"job_id": id, "deleted": true}));
    s.get(&format!("/v1/cron/get/{id}"))
        .await
        .err(404, "NOT_FOUND");
    let again = s.post(&format!("/v1/cron/delete/{id}"), json!({})).await;
    let message = again.err(404, "NOT_FOUND");
    assert!(message.contains(&id), "{message}");
    assert!(again.body["error"]["hint"].is_string());
    let other = once["job_id"].as_str().unwrap();
    s.post(&format!("/v1/cron/delete/{other}"), json!({}))
        .await
        .ok();
    assert_eq!(s.get("/v1/cron/list").await.data()["items"], json!([]));
}

async fn refusals_name_the_field_with_a_hint_and_store_nothing(b: Backend) {
    let s = TestServer::in_process(b).await;
    queue(&s, "reports").await;
    let q = "reports";
    for (body, field) in [
        (json!({"queue": q}), "cron_expr or run_at is required"),
        (
            json!({"cron_expr": "* * * * *", "run_at": at(60), "queue": q}),
            "cron_expr and run_at",
        ),
        (json!({"cron_expr": "61 * * * *", "queue": q}), "cron_expr"),
        (json!({"cron_expr": "* * * *", "queue": q}), "cron_expr"),
        (
            json!({"cron_expr": "0 0 0 1 1 * 2030", "queue": q}),
            "cron_expr",
        ),
        (json!({"cron_expr": "@sometimes", "queue": q}), "cron_expr"),
        (json!({"cron_expr": "", "queue": q}), "cron_expr"),
        (json!({"cron_expr": "0 0 30 2 *", "queue": q}), "cron_expr"),
        (
            json!({"cron_expr": "* * * * *", "timezone": "Mars/Olympus", "queue": q}),
            "timezone",
        ),
        (
            json!({"cron_expr": "* * * * *", "timezone": "/etc/localtime", "queue": q}),
            "timezone",
        ),
        (
            json!({"run_at": at(60), "timezone": "Nowhere", "queue": q}),
            "timezone",
        ),
        (json!({"run_at": "tomorrow", "queue": q}), "run_at"),
        (
            json!({"cron_expr": "* * * * *"}),
            "queue or task is required",
        ),
        (
            json!({"cron_expr": "* * * * *", "queue": q, "task": "https://example.com/x"}),
            "queue and task",
        ),
        (
            json!({"cron_expr": "* * * * *", "queue": "bad name!"}),
            "queue must match",
        ),
        (
            json!({"cron_expr": "* * * * *", "task": "http://example.com/x"}),
            "task",
        ),
        (
            json!({"cron_expr": "* * * * *", "task": "ftp://example.com/x"}),
            "task",
        ),
        (
            json!({"cron_expr": "* * * * *", "queue": q, "max_runs": 0}),
            "max_runs",
        ),
        (
            json!({"cron_expr": "* * * * *", "queue": q, "overlap_policy": "sometimes"}),
            "overlap_policy",
        ),
        (
            json!({"cron_expr": "* * * * *", "queue": q, "headers": {"bad name": "x"}}),
            "headers",
        ),
        (
            json!({"cron_expr": "* * * * *", "queue": q, "headers": [1]}),
            "headers",
        ),
        (
            json!({"cron_expr": "* * * * *", "queue": q, "name": "a\u{7}b"}),
            "name",
        ),
        (
            json!({"cron_expr": "* * * * *", "queue": q, "idempotency_key": ""}),
            "idempotency_key",
        ),
    ] {
        let r = s.post("/v1/cron/create", body.clone()).await;
        let message = r.err(400, "INVALID_PARAMS");
        assert!(
            message.contains(field),
            "{body}: {message:?} does not name {field:?}"
        );
        assert!(
            r.body["error"]["hint"]
                .as_str()
                .is_some_and(|h| !h.is_empty()),
            "{body}: no hint: {}",
            r.body
        );
    }
    assert_eq!(s.get("/v1/cron/list").await.data()["items"], json!([]));
    // Update and the path refuse as create does, and change nothing.
    let a = create(&s, json!({"cron_expr": "@hourly", "queue": q})).await;
    let id = a["job_id"].as_str().unwrap();
    for (body, field) in [
        (json!({}), "job_id"),
        (
            json!({"job_id": id, "timezone": "Mars/Olympus"}),
            "timezone",
        ),
        (json!({"job_id": id, "cron_expr": "nope"}), "cron_expr"),
        (
            json!({"job_id": id, "cron_expr": "* * * * *", "run_at": at(5)}),
            "cron_expr and run_at",
        ),
        (json!({"job_id": id, "queue": "bad name!"}), "queue"),
    ] {
        let r = s.post("/v1/cron/update", body.clone()).await;
        let message = r.err(400, "INVALID_PARAMS");
        assert!(message.contains(field), "{body}: {message:?}");
        assert!(r.body["error"]["hint"].is_string());
    }
    assert_eq!(job(&s, id).await, a);
    s.post("/v1/cron/update", json!({"job_id": "cron_nope"}))
        .await
        .err(404, "NOT_FOUND");
    for path in ["/v1/cron/pause/cron_nope", "/v1/cron/resume/cron_nope"] {
        s.post(path, json!({})).await.err(404, "NOT_FOUND");
    }
}

async fn create_with_an_idempotency_key_answers_the_first_job(b: Backend) {
    let s = TestServer::in_process(b).await;
    queue(&s, "reports").await;
    let body = json!({"cron_expr": "@daily", "queue": "reports", "idempotency_key": "setup-1"});
    let first = s.post("/v1/cron/create", body.clone()).await;
    first.ok();
    assert_eq!(first.body["metadata"]["idempotent_replay"], false);
    let second = s.post("/v1/cron/create", body).await;
    second.ok();
    assert_eq!(second.body["metadata"]["idempotent_replay"], true);
    assert_eq!(second.data()["job_id"], first.data()["job_id"]);
    assert_eq!(
        s.get("/v1/cron/list").await.data()["items"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    // Another project's key space is its own.
    let theirs = s
        .post_as(&s.other_key, "/v1/queue/create", json!({"name": "reports"}))
        .await;
    theirs.ok();
    let r = s
        .post_as(
            &s.other_key,
            "/v1/cron/create",
            json!({"cron_expr": "@daily", "queue": "reports", "idempotency_key": "setup-1"}),
        )
        .await;
    r.ok();
    assert_ne!(r.data()["job_id"], first.data()["job_id"]);
}

async fn each_tick_publishes_once_with_its_dedupe_key(b: Backend) {
    let s = TestServer::in_process(b).await;
    queue(&s, "reports").await;
    let a = create(
        &s,
        json!({"cron_expr": "*/5 * * * *", "queue": "reports", "payload": {"n": 1}, "headers": {"x-a": "1"}}),
    )
    .await;
    let id = a["job_id"].as_str().unwrap().to_owned();
    tick(&s, 299).await;
    assert!(
        drain(&s, "reports").await.is_empty(),
        "not due before 12:05"
    );
    tick(&s, 1).await;
    // Fired again (another pass, as another server would): no second message.
    cron_firing::pass(&s.state).await.unwrap();
    let got = drain(&s, "reports").await;
    assert_eq!(got.len(), 1, "{got:?}");
    let key = format!("cron:{id}:{}", at(300));
    assert_eq!(got[0]["idempotency_key"], key);
    assert_eq!(got[0]["payload"], json!({"n": 1}));
    let j = job(&s, &id).await;
    assert_eq!(j["run_count"], 1);
    assert_eq!(j["next_run_at"], at(600));
    assert_eq!(
        j["runs"],
        json!([{"scheduled_at": at(300), "fired_at": at(300),
                "message_id": got[0]["message_id"], "outcome": "published"}])
    );
    // The run's key is an ordinary dedupe key: publishing it again is a
    // replay of the run's message.
    let r = s
        .post(
            "/v1/queue/publish",
            json!({"queue": "reports", "payload": {"n": 1}, "idempotency_key": key, "headers": {"x-a": "1"}}),
        )
        .await;
    r.ok();
    assert_eq!(r.body["metadata"]["idempotent_replay"], true);
    tick(&s, 300).await;
    assert_eq!(drain(&s, "reports").await.len(), 1, "the 12:10 tick");
    assert_eq!(job(&s, &id).await["run_count"], 2);
}

async fn missed_ticks_fire_once(b: Backend) {
    let s = TestServer::in_process(b).await;
    queue(&s, "reports").await;
    let a = create(&s, json!({"cron_expr": "*/5 * * * *", "queue": "reports"})).await;
    let id = a["job_id"].as_str().unwrap();
    // No pass for an hour and two minutes: twelve ticks missed.
    tick(&s, 3720).await;
    let got = drain(&s, "reports").await;
    assert_eq!(got.len(), 1, "missed ticks collapse into one run");
    let j = job(&s, id).await;
    assert_eq!(
        j["runs"][0]["scheduled_at"],
        at(300),
        "the run carries the first missed tick"
    );
    assert_eq!(j["runs"][0]["fired_at"], at(3720));
    assert_eq!(
        j["next_run_at"],
        at(3900),
        "the first tick after now: 13:05"
    );
    assert_eq!(j["run_count"], 1);
}

async fn one_shot_and_max_runs_end_the_schedule(b: Backend) {
    let s = TestServer::in_process(b).await;
    queue(&s, "reports").await;
    let once = create(&s, json!({"run_at": at(90), "queue": "reports"})).await;
    let limited = create(
        &s,
        json!({"cron_expr": "* * * * *", "queue": "reports", "max_runs": 2}),
    )
    .await;
    tick(&s, 60).await; // 12:01: limited's first
    tick(&s, 30).await; // 12:01:30: the one-shot
    tick(&s, 30).await; // 12:02: limited's second and last
    tick(&s, 3600).await;
    assert_eq!(drain(&s, "reports").await.len(), 3);
    let once = job(&s, once["job_id"].as_str().unwrap()).await;
    assert_eq!(
        (once["run_count"].clone(), once["next_run_at"].clone()),
        (json!(1), Value::Null)
    );
    let limited = job(&s, limited["job_id"].as_str().unwrap()).await;
    assert_eq!(
        (limited["run_count"].clone(), limited["next_run_at"].clone()),
        (json!(2), Value::Null)
    );
    // A one-shot whose time has passed fires at once.
    let late = create(&s, json!({"run_at": at(0), "queue": "reports"})).await;
    assert_eq!(late["next_run_at"], at(0));
    tick(&s, 0).await;
    assert_eq!(drain(&s, "reports").await.len(), 1);
}

async fn paused_jobs_do_not_fire_and_resume_skips_missed_ticks(b: Backend) {
    let s = TestServer::in_process(b).await;
    queue(&s, "reports").await;
    let a = create(&s, json!({"cron_expr": "*/5 * * * *", "queue": "reports"})).await;
    let id = a["job_id"].as_str().unwrap();
    let r = s.post(&format!("/v1/cron/pause/{id}"), json!({})).await;
    r.ok();
    assert_eq!(r.data()["paused"], true);
    assert_eq!(r.data()["next_run_at"], at(300), "pause keeps the tick");
    tick(&s, 1200).await;
    assert!(
        drain(&s, "reports").await.is_empty(),
        "paused: nothing fired"
    );
    let r = s.post(&format!("/v1/cron/resume/{id}"), json!({})).await;
    r.ok();
    assert_eq!(r.data()["paused"], false);
    assert_eq!(
        r.data()["next_run_at"],
        at(1500),
        "the ticks missed while paused are skipped"
    );
    tick(&s, 0).await;
    assert!(drain(&s, "reports").await.is_empty());
    tick(&s, 300).await;
    assert_eq!(drain(&s, "reports").await.len(), 1);
}

async fn overlap_skip_waits_for_the_previous_message(b: Backend) {
    let s = TestServer::in_process(b).await;
    queue(&s, "reports").await;
    let a = create(
        &s,
        json!({"cron_expr": "* * * * *", "queue": "reports", "overlap_policy": "skip"}),
    )
    .await;
    let id = a["job_id"].as_str().unwrap();
    tick(&s, 60).await;
    // The first run's message waits: the next tick is skipped.
    tick(&s, 60).await;
    let j = job(&s, id).await;
    assert_eq!(j["runs"][0]["outcome"], "skipped");
    assert_eq!(j["runs"][0]["message_id"], Value::Null);
    assert_eq!(j["run_count"], 1, "a skipped run does not count");
    // In flight still skips; once acked the next tick publishes.
    let held = drain(&s, "reports").await;
    assert_eq!(held.len(), 1);
    tick(&s, 60).await;
    assert_eq!(job(&s, id).await["runs"][0]["outcome"], "skipped");
    s.post(
        "/v1/queue/ack",
        json!({"queue": "reports", "message_id": held[0]["message_id"], "receipt": held[0]["receipt"]}),
    )
    .await
    .ok();
    tick(&s, 60).await;
    let j = job(&s, id).await;
    assert_eq!(j["runs"][0]["outcome"], "published");
    assert_eq!(j["run_count"], 2);
    assert_eq!(drain(&s, "reports").await.len(), 1);
}

async fn update_changes_the_schedule(b: Backend) {
    let s = TestServer::in_process(b).await;
    queue(&s, "reports").await;
    queue(&s, "other").await;
    let a = create(
        &s,
        json!({"cron_expr": "@daily", "queue": "reports", "name": "n"}),
    )
    .await;
    let id = a["job_id"].as_str().unwrap();
    let r = s
        .post(
            "/v1/cron/update",
            json!({"job_id": id, "cron_expr": "*/10 * * * *", "queue": "other", "payload": [1]}),
        )
        .await;
    r.ok();
    let u = r.data();
    assert_eq!(u["cron_expr"], "*/10 * * * *");
    assert_eq!(u["next_run_at"], at(600));
    assert_eq!(u["queue"], "other");
    assert_eq!(u["name"], "n", "fields not given are kept");
    assert_eq!(u["payload"], json!([1]));
    // From a repeating schedule to a one-shot.
    let r = s
        .post("/v1/cron/update", json!({"job_id": id, "run_at": at(120)}))
        .await;
    r.ok();
    assert_eq!(r.data()["cron_expr"], Value::Null);
    assert_eq!(r.data()["next_run_at"], at(120));
    tick(&s, 120).await;
    assert_eq!(drain(&s, "other").await.len(), 1);
    assert!(drain(&s, "reports").await.is_empty());
}

async fn daylight_saving_in_a_real_zone(b: Backend) {
    // Europe/Berlin skips 02:00-03:00 on 2027-03-28 and repeats it on
    // 2027-10-31 (docs/cron.md: a skipped fixed time fires at 03:00, a
    // repeated one once, at its first instant).
    let store = crate::harness::fresh_store(b).await;
    let s = TestServer::on_store_at(
        store.store.clone(),
        Default::default(),
        "2027-03-27T12:00:00Z".parse().unwrap(),
    )
    .await;
    queue(&s, "reports").await;
    let a = create(
        &s,
        json!({"cron_expr": "30 2 * * *", "timezone": "Europe/Berlin", "queue": "reports"}),
    )
    .await;
    let id = a["job_id"].as_str().unwrap();
    assert_eq!(
        a["next_run_at"], "2027-03-28T01:00:00Z",
        "03:00 CEST: 02:30 is skipped"
    );
    s.clock.advance(SignedDuration::from_hours(14)); // 2027-03-28T02:00Z
    cron_firing::pass(&s.state).await.unwrap();
    let j = job(&s, id).await;
    assert_eq!(j["runs"][0]["scheduled_at"], "2027-03-28T01:00:00Z");
    assert_eq!(j["next_run_at"], "2027-03-29T00:30:00Z", "02:30 CEST");
    // Autumn: one run for the repeated 02:30. Paused over the summer, so
    // no server's loop fires the ticks between.
    s.post(&format!("/v1/cron/pause/{id}"), json!({}))
        .await
        .ok();
    let autumn: Timestamp = "2027-10-30T12:00:00Z".parse().unwrap();
    let now = s.clock.now();
    s.clock.advance(autumn.duration_since(now));
    let r = s.post(&format!("/v1/cron/resume/{id}"), json!({})).await;
    r.ok();
    assert_eq!(
        r.data()["next_run_at"],
        "2027-10-31T00:30:00Z",
        "02:30 CEST, the first instant"
    );
    s.clock.advance(SignedDuration::from_hours(13)); // 2027-10-31T01:00Z
    cron_firing::pass(&s.state).await.unwrap();
    let j = job(&s, id).await;
    assert_eq!(
        j["next_run_at"], "2027-11-01T01:30:00Z",
        "not 01:30Z (the repeat): next day, 02:30 CET"
    );
    s.clock.advance(SignedDuration::from_hours(1)); // past the repeated 02:30 CET
    cron_firing::pass(&s.state).await.unwrap();
    let runs: Vec<_> = job(&s, id).await["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["scheduled_at"].clone())
        .collect();
    assert_eq!(
        runs,
        vec![json!("2027-10-31T00:30:00Z"), json!("2027-03-28T01:00:00Z")]
    );
    assert_eq!(drain(&s, "reports").await.len(), 2);
    drop(store);
}

async fn discovery_and_openapi_list_the_cron_endpoints(b: Backend) {
    let s = TestServer::in_process(b).await;
    let d = s.get("/v1/discovery").await;
    d.ok();
    let listed: Vec<(String, String)> = d.data()["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_owned(),
                c["path"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    for (id, path) in [
        ("cron.create", "/v1/cron/create"),
        ("cron.list", "/v1/cron/list"),
        ("cron.get", "/v1/cron/get/{job_id}"),
        ("cron.update", "/v1/cron/update"),
        ("cron.pause", "/v1/cron/pause/{job_id}"),
        ("cron.resume", "/v1/cron/resume/{job_id}"),
        ("cron.delete", "/v1/cron/delete/{job_id}"),
    ] {
        assert!(
            listed.contains(&(id.to_owned(), path.to_owned())),
            "{id} missing"
        );
    }
    let doc = s.get("/openapi.json").await.body;
    for op in [
        "cron_create",
        "cron_list",
        "cron_get",
        "cron_update",
        "cron_pause",
        "cron_resume",
        "cron_delete",
        "cron_delete_post",
    ] {
        assert!(
            doc.to_string()
                .contains(&format!("\"operationId\":\"{op}\"")),
            "{op} not in /openapi.json"
        );
    }
}

async fn other_projects_cannot_see_a_job(b: Backend) {
    let s = TestServer::in_process(b).await;
    queue(&s, "reports").await;
    let a = create(&s, json!({"cron_expr": "@hourly", "queue": "reports"})).await;
    let id = a["job_id"].as_str().unwrap();
    let k = &s.other_key;
    s.get_as(k, &format!("/v1/cron/get/{id}"))
        .await
        .err(404, "NOT_FOUND");
    s.post_as(k, &format!("/v1/cron/pause/{id}"), json!({}))
        .await
        .err(404, "NOT_FOUND");
    s.post_as(k, &format!("/v1/cron/delete/{id}"), json!({}))
        .await
        .err(404, "NOT_FOUND");
    s.post_as(k, "/v1/cron/update", json!({"job_id": id, "payload": 1}))
        .await
        .err(404, "NOT_FOUND");
    let theirs = s.get_as(k, "/v1/cron/list").await;
    assert_eq!(theirs.data()["items"], json!([]));
    // Their queue of the same name is theirs: a job of ours never fires there.
    s.post_as(k, "/v1/queue/create", json!({"name": "reports"}))
        .await
        .ok();
    tick(&s, 3600).await;
    let r = s
        .post_as(k, "/v1/queue/consume", json!({"queue": "reports"}))
        .await;
    assert_eq!(r.data()["items"], json!([]));
    assert_eq!(job(&s, id).await["run_count"], 1);
}
