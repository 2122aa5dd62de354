//! The dashboard's cron page over HTTP: the schedules with their next run,
//! runs and paused state; one schedule's recent runs; pause and resume
//! through the API's own path (a resume skips missed ticks), and the
//! refusals (not same-origin, no `admin`, unknown or hidden schedule).

use reqwest::StatusCode;
use serde_json::json;

use crate::both;
use crate::cron::{create, tick};
use crate::dashboard::Browser;
use crate::harness::{Backend, TestServer};

both!(cron_page_lists_schedules_and_their_runs);
both!(cron_pause_and_resume_from_the_dashboard);
both!(cron_refusals_change_nothing);

async fn setup(s: &TestServer) -> String {
    s.post("/v1/queue/create", json!({"name": "reports"}))
        .await
        .ok();
    let job = create(
        s,
        json!({"name": "nightly", "cron_expr": "*/5 * * * *", "queue": "reports", "payload": {"r": 1}}),
    )
    .await;
    job["job_id"].as_str().unwrap().to_owned()
}

async fn api_job(s: &TestServer, id: &str) -> serde_json::Value {
    let r = s.get(&format!("/v1/cron/get/{id}")).await;
    r.ok();
    r.data().clone()
}

async fn cron_page_lists_schedules_and_their_runs(b: Backend) {
    let s = TestServer::in_process(b).await;
    let me = Browser::signed_in(&s, &s.key);
    me.get("/dashboard/cron").await.has("No schedules.");
    let id = setup(&s).await;
    tick(&s, 300).await;
    tick(&s, 300).await;

    let list = me.get("/dashboard/cron").await;
    assert_eq!(list.status, StatusCode::OK);
    list.has(&format!(r#"href="/dashboard/cron/{id}">nightly</a>"#))
        .has("<code>*/5 * * * *</code>")
        .has(r#"href="/dashboard/queues/reports""#)
        .has(&format!(r#"id="pause-{id}""#))
        .has(r#"<td class="num" data-label="Runs">2</td>"#)
        .has("in 5 m 0 s")
        .lacks("badge-paused");
    me.get("/dashboard").await.has(r#"href="/dashboard/cron""#);

    let page = me.get(&format!("/dashboard/cron/{id}")).await;
    assert_eq!(page.status, StatusCode::OK);
    let runs = api_job(&s, &id).await["runs"].clone();
    assert_eq!(runs.as_array().unwrap().len(), 2);
    page.has(r#"id="cron-runs""#).has("published");
    for r in runs.as_array().unwrap() {
        let m = r["message_id"].as_str().unwrap();
        page.has(&format!(r#"href="/dashboard/queues/reports/messages/{m}""#));
    }
}

async fn cron_pause_and_resume_from_the_dashboard(b: Backend) {
    let s = TestServer::in_process(b).await;
    let me = Browser::signed_in(&s, &s.key);
    let id = setup(&s).await;

    let done = me
        .post_form(&format!("/dashboard/cron/{id}/pause"), &[])
        .await;
    assert_eq!(done.status, StatusCode::SEE_OTHER);
    assert_eq!(done.location(), format!("/dashboard/cron/{id}?paused=yes"));
    assert_eq!(api_job(&s, &id).await["paused"], true);
    me.get(done.location())
        .await
        .has("Paused nightly: it does not fire until it is resumed.")
        .has("badge-paused")
        .has(&format!(r#"id="resume-{id}""#));
    me.get("/dashboard/cron").await.has("badge-paused");
    // Paused: its ticks pass without a run.
    tick(&s, 1200).await;
    assert_eq!(api_job(&s, &id).await["run_count"], 0);

    let done = me
        .post_form(&format!("/dashboard/cron/{id}/resume"), &[])
        .await;
    assert_eq!(done.location(), format!("/dashboard/cron/{id}?paused=no"));
    let j = api_job(&s, &id).await;
    assert_eq!(j["paused"], false);
    // As the API's resume: the missed ticks are skipped, the next is ahead.
    let next: jiff::Timestamp = j["next_run_at"].as_str().unwrap().parse().unwrap();
    assert!(next > s.clock.now(), "{next} is not after now");
    tick(&s, 0).await;
    assert_eq!(
        api_job(&s, &id).await["run_count"],
        0,
        "nothing fired for the missed ticks"
    );
    tick(&s, 300).await;
    assert_eq!(api_job(&s, &id).await["run_count"], 1);
}

async fn cron_refusals_change_nothing(b: Backend) {
    let s = TestServer::in_process(b).await;
    let me = Browser::signed_in(&s, &s.key);
    let id = setup(&s).await;
    let path = format!("/dashboard/cron/{id}/pause");
    let evil = me
        .send(
            me.http
                .post(s.url(&path))
                .header(reqwest::header::ORIGIN, "http://evil.example"),
        )
        .await;
    assert_eq!(evil.status, StatusCode::FORBIDDEN);
    let reader = s.scoped_key("alpha", "read", "*").await;
    let ro = Browser::signed_in(&s, &reader);
    assert_eq!(ro.get("/dashboard/cron").await.status, StatusCode::OK);
    let refused = ro.post_form(&path, &[]).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    refused.has("admin");
    // A key whose patterns do not match the schedule's queue sees nothing
    // of it.
    let narrow = s.scoped_key("alpha", "full", "other*").await;
    let other = Browser::signed_in(&s, &narrow);
    other
        .get("/dashboard/cron")
        .await
        .lacks(&id)
        .has("No schedules.");
    assert_eq!(
        other.get(&format!("/dashboard/cron/{id}")).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        other.post_form(&path, &[]).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(api_job(&s, &id).await["paused"], false);
    // Unknown and malformed ids.
    let gone = me.post_form("/dashboard/cron/cron_nope/pause", &[]).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
    gone.has("cron job &quot;cron_nope&quot; not found");
    assert_eq!(
        me.get("/dashboard/cron/a%07b").await.status,
        StatusCode::BAD_REQUEST
    );
}
