//! The queue page's controls over HTTP: pause/resume (the paused state on
//! the queue page and the overview, consume getting nothing, a long poll
//! woken by the dashboard's resume as by the API's) and the settings form
//! (every setting saved and cleared; a refused value answered with the
//! API's own message and hint on the form, nothing changed), with the
//! refusals (not same-origin, no `admin`, unknown queue).

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::both;
use crate::dashboard::Browser;
use crate::harness::{Backend, TestServer};

both!(queue_page_pauses_and_resumes);
both!(a_dashboard_resume_wakes_a_long_poll);
both!(pause_and_resume_refusals_change_nothing);
both!(settings_form_saves_and_clears_every_setting);
both!(settings_refusals_show_the_api_error_and_change_nothing);
both!(fifo_settings_have_no_priority);

async fn consume(s: &TestServer, queue: &str) -> Vec<Value> {
    let r = s
        .post(
            "/v1/queue/consume",
            json!({"queue": queue, "max_messages": 10}),
        )
        .await;
    r.ok();
    r.data()["items"].as_array().unwrap().clone()
}

async fn paused(s: &TestServer, queue: &str) -> bool {
    s.get(&format!("/v1/queue/get/{queue}")).await.data()["paused"]
        .as_bool()
        .unwrap()
}

/// As maud escapes text, to find an API message in a page.
fn escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

async fn queue_page_pauses_and_resumes(b: Backend) {
    let s = TestServer::start(b).await;
    let me = Browser::signed_in(&s, &s.key);
    s.publish("jobs", json!({"n": 1})).await;

    me.get("/dashboard/queues/jobs")
        .await
        .has(r#"action="/dashboard/queues/jobs/pause""#)
        .has(r#"id="pause-queue""#)
        .lacks("badge-paused");
    me.get("/dashboard").await.lacks("badge-paused");

    let done = me.post_form("/dashboard/queues/jobs/pause", &[]).await;
    assert_eq!(done.status, StatusCode::SEE_OTHER);
    assert_eq!(done.location(), "/dashboard/queues/jobs?paused=yes");
    assert!(paused(&s, "jobs").await);
    me.get(done.location())
        .await
        .has("Paused jobs: consumers and push deliveries get nothing")
        .has(r#"class="badge badge-paused""#)
        .has(r#"action="/dashboard/queues/jobs/resume""#)
        .lacks(r#"id="pause-queue""#);
    // The overview marks it, and only it.
    let overview = me.get("/dashboard").await;
    assert_eq!(overview.body.matches("badge-paused").count(), 1);
    // Paused: the publish is kept, consume gets nothing.
    s.publish("jobs", json!({"n": 2})).await;
    assert!(consume(&s, "jobs").await.is_empty());
    assert_eq!(s.stats("jobs").await["available"], 2);

    let done = me.post_form("/dashboard/queues/jobs/resume", &[]).await;
    assert_eq!(done.location(), "/dashboard/queues/jobs?paused=no");
    assert!(!paused(&s, "jobs").await);
    me.get(done.location())
        .await
        .has("Resumed jobs: hand-outs start again.")
        .lacks("badge-paused");
    assert_eq!(consume(&s, "jobs").await.len(), 2);
}

/// The dashboard's resume is the API's (`Messages::pause`): it wakes a long
/// poll at once, though the poll's own re-check is further off than its
/// whole wait.
async fn a_dashboard_resume_wakes_a_long_poll(b: Backend) {
    let config = onceq_server::ServerConfig {
        long_poll_recheck: Duration::from_secs(60),
        ..Default::default()
    };
    let s = TestServer::in_process_with(b, config).await;
    let me = Browser::signed_in(&s, &s.key);
    s.publish("jobs", json!("held")).await;
    let r = me.post_form("/dashboard/queues/jobs/pause", &[]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    let (http, url, key) = (s.http.clone(), s.url("/v1/queue/consume"), s.key.clone());
    let waiter = tokio::spawn(async move {
        let r = http
            .post(url)
            .bearer_auth(key)
            .json(&json!({"queue": "jobs", "wait_seconds": 20}))
            .send()
            .await
            .unwrap();
        r.json::<Value>().await.unwrap()
    });
    // Real time only to see the poll still waiting, as pause.rs does.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiter.is_finished(), "a paused queue hands nothing out");
    let r = me.post_form("/dashboard/queues/jobs/resume", &[]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    let got = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .expect("the dashboard's resume did not wake the long poll")
        .unwrap();
    assert_eq!(got["data"]["items"][0]["payload"], "held");
}

async fn pause_and_resume_refusals_change_nothing(b: Backend) {
    let s = TestServer::start(b).await;
    let me = Browser::signed_in(&s, &s.key);
    s.publish("jobs", json!(1)).await;
    // Not from the dashboard (CSRF).
    let evil = me
        .send(
            me.http
                .post(s.url("/dashboard/queues/jobs/pause"))
                .header(reqwest::header::ORIGIN, "http://evil.example"),
        )
        .await;
    assert_eq!(evil.status, StatusCode::FORBIDDEN);
    // No Origin and not htmx.
    let bare = me
        .send(me.http.post(s.url("/dashboard/queues/jobs/pause")))
        .await;
    assert_eq!(bare.status, StatusCode::FORBIDDEN);
    assert!(!paused(&s, "jobs").await);
    // A key without admin.
    let reader = s.scoped_key("alpha", "read", "*").await;
    let ro = Browser::signed_in(&s, &reader)
        .post_form("/dashboard/queues/jobs/pause", &[])
        .await;
    assert_eq!(ro.status, StatusCode::FORBIDDEN);
    ro.has("admin");
    assert!(!paused(&s, "jobs").await);
    // A queue outside the key's patterns is not found, as one that does
    // not exist.
    let narrow = s.scoped_key("alpha", "full", "other*").await;
    let hidden = Browser::signed_in(&s, &narrow)
        .post_form("/dashboard/queues/jobs/pause", &[])
        .await;
    assert_eq!(hidden.status, StatusCode::NOT_FOUND);
    assert!(!paused(&s, "jobs").await);
    let gone = me.post_form("/dashboard/queues/nope/pause", &[]).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
    gone.has("queue &quot;nope&quot; not found");
    let bad = me
        .post_form("/dashboard/queues/bad%20name/resume", &[])
        .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    // Paused twice stays paused; the store said so.
    me.post_form("/dashboard/queues/jobs/pause", &[]).await;
    let again = me.post_form("/dashboard/queues/jobs/pause", &[]).await;
    assert_eq!(again.location(), "/dashboard/queues/jobs?paused=yes");
    assert!(paused(&s, "jobs").await);
}

/// The whole form as the settings page fills it, with `changes` applied.
fn form<'a>(changes: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut f = vec![
        ("max_retries", "3"),
        ("visibility_timeout_default", "30"),
        ("message_retention_days", "7"),
        ("completed_retention_seconds", ""),
        ("enable_priority", "true"),
        ("dead_letter_queue", "jobs-dlq"),
        ("retry_backoff.initial_seconds", ""),
        ("retry_backoff.max_seconds", ""),
        ("retry_backoff.multiplier", ""),
        ("retry_backoff.jitter", ""),
        ("max_in_flight", ""),
        ("rate_per_sec", ""),
    ];
    for (k, v) in changes {
        f.iter_mut().find(|(n, _)| n == k).unwrap().1 = v;
    }
    f
}

async fn settings_form_saves_and_clears_every_setting(b: Backend) {
    let s = TestServer::start(b).await;
    let me = Browser::signed_in(&s, &s.key);
    s.publish("jobs", json!(1)).await;
    s.post("/v1/queue/create", json!({"name": "graveyard"}))
        .await
        .ok();

    me.get("/dashboard/queues/jobs")
        .await
        .has(r#"href="/dashboard/queues/jobs/settings""#);
    let page = me.get("/dashboard/queues/jobs/settings").await;
    assert_eq!(page.status, StatusCode::OK);
    page.has(r#"action="/dashboard/queues/jobs/settings""#)
        .has(r#"name="max_retries" value="3""#)
        .has(r#"name="visibility_timeout_default" value="30""#)
        .has(r#"name="message_retention_days" value="7""#)
        .has(r#"name="completed_retention_seconds" value="0""#)
        .has(r#"name="dead_letter_queue" value="jobs-dlq""#)
        .has(r#"name="retry_backoff.initial_seconds" value="""#)
        .has(r#"name="max_in_flight" value="""#)
        .has(r#"<option value="true" selected>"#);

    let saved = me
        .post_form(
            "/dashboard/queues/jobs/settings",
            &form(&[
                ("max_retries", "7"),
                ("visibility_timeout_default", "90"),
                ("message_retention_days", "14"),
                ("completed_retention_seconds", "3600"),
                ("enable_priority", "false"),
                ("dead_letter_queue", "graveyard"),
                ("retry_backoff.initial_seconds", "5"),
                ("retry_backoff.max_seconds", "600"),
                ("retry_backoff.multiplier", "3"),
                ("retry_backoff.jitter", "0.5"),
                ("max_in_flight", "20"),
                ("rate_per_sec", "2.5"),
            ]),
        )
        .await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.body);
    assert_eq!(saved.location(), "/dashboard/queues/jobs?updated=yes");
    let q = s.get("/v1/queue/get/jobs").await.data().clone();
    assert_eq!(q["max_retries"], 7);
    assert_eq!(q["visibility_timeout_default"], 90);
    assert_eq!(q["message_retention_days"], 14);
    assert_eq!(q["completed_retention_seconds"], 3600);
    assert_eq!(q["enable_priority"], false);
    assert_eq!(q["dead_letter_queue"], "graveyard");
    assert_eq!(
        q["retry_backoff"],
        json!({"initial_seconds": 5, "max_seconds": 600, "multiplier": 3.0, "jitter": 0.5})
    );
    assert_eq!(q["max_in_flight"], 20);
    assert_eq!(q["rate_per_sec"], 2.5);
    me.get(saved.location())
        .await
        .has("Settings of jobs saved.")
        .has("priority <strong>off</strong>")
        .has("in flight ≤ <strong>20</strong>")
        .has("rate ≤ <strong>2.5/s</strong>")
        .has("keeps finished <strong>1 h 0 m</strong>")
        .has(r#"id="completed-tab" href="/dashboard/queues/jobs/completed""#)
        .has("backoff <strong>")
        .has(r#"href="/dashboard/queues/graveyard""#);
    // The form shows what was saved.
    me.get("/dashboard/queues/jobs/settings")
        .await
        .has(r#"name="retry_backoff.jitter" value="0.5""#)
        .has(r#"name="rate_per_sec" value="2.5""#)
        .has(r#"name="completed_retention_seconds" value="3600""#)
        .has(r#"<option value="false" selected>"#);

    // Empty caps and an empty backoff remove them; empty numbers keep theirs.
    let cleared = me
        .post_form(
            "/dashboard/queues/jobs/settings",
            &form(&[
                ("max_retries", ""),
                ("dead_letter_queue", ""),
                ("enable_priority", "false"),
                ("completed_retention_seconds", "0"),
            ]),
        )
        .await;
    assert_eq!(cleared.status, StatusCode::SEE_OTHER, "{}", cleared.body);
    let q = s.get("/v1/queue/get/jobs").await.data().clone();
    assert_eq!(q["retry_backoff"], Value::Null);
    assert_eq!(q["max_in_flight"], Value::Null);
    assert_eq!(q["rate_per_sec"], Value::Null);
    assert_eq!(q["max_retries"], 7, "an empty number keeps its value");
    assert_eq!(q["dead_letter_queue"], "graveyard");
    assert_eq!(q["visibility_timeout_default"], 30);
    assert_eq!(q["completed_retention_seconds"], 0);
    me.get("/dashboard/queues/jobs")
        .await
        .lacks("keeps finished")
        .lacks(r#"id="completed-tab""#)
        .lacks("in flight ≤")
        .lacks("backoff <strong>");
}

async fn settings_refusals_show_the_api_error_and_change_nothing(b: Backend) {
    let s = TestServer::start(b).await;
    let me = Browser::signed_in(&s, &s.key);
    s.publish("jobs", json!(1)).await;
    let before = s.get("/v1/queue/get/jobs").await.data().clone();
    let path = "/dashboard/queues/jobs/settings";

    // Each refused value: the form answers with the status and message the
    // API gives the same value, marks the field, and changes nothing.
    let cases: [(&str, &str, Value, u16); 12] = [
        ("max_retries", "5000", json!({"max_retries": 5000}), 400),
        ("max_retries", "abc", json!({"max_retries": "abc"}), 400),
        (
            "visibility_timeout_default",
            "2.5",
            json!({"visibility_timeout_default": 2.5}),
            400,
        ),
        (
            "message_retention_days",
            "0",
            json!({"message_retention_days": 0}),
            400,
        ),
        (
            "retry_backoff.max_seconds",
            "1",
            json!({"retry_backoff": {"initial_seconds": 10, "max_seconds": 1}}),
            400,
        ),
        ("max_in_flight", "0", json!({"max_in_flight": 0}), 400),
        (
            "completed_retention_seconds",
            "2592001",
            json!({"completed_retention_seconds": 2_592_001}),
            400,
        ),
        (
            "completed_retention_seconds",
            "-1",
            json!({"completed_retention_seconds": -1}),
            400,
        ),
        (
            "completed_retention_seconds",
            "1.5",
            json!({"completed_retention_seconds": 1.5}),
            400,
        ),
        ("rate_per_sec", "0", json!({"rate_per_sec": 0}), 400),
        (
            "dead_letter_queue",
            "jobs",
            json!({"dead_letter_queue": "jobs"}),
            400,
        ),
        (
            "dead_letter_queue",
            "nowhere",
            json!({"dead_letter_queue": "nowhere"}),
            404,
        ),
    ];
    for (field, value, api_body, status) in cases {
        let mut changes = vec![(field, value)];
        if field == "retry_backoff.max_seconds" {
            changes.push(("retry_backoff.initial_seconds", "10"));
        }
        let page = me.post_form(path, &form(&changes)).await;
        let mut body = api_body.as_object().unwrap().clone();
        body.insert("name".into(), json!("jobs"));
        let api = s.post("/v1/queue/update", Value::Object(body)).await;
        let code = if status == 404 {
            "QUEUE_NOT_FOUND"
        } else {
            "INVALID_PARAMS"
        };
        let message = api.err(status, code);
        // The form's user wrote no JSON: its position is left out.
        let message = match message.rfind(" at line ") {
            Some(at) => message[..at].to_owned(),
            None => message,
        };
        assert_eq!(
            page.status.as_u16(),
            status,
            "{field}={value}: {}",
            page.body
        );
        page.lacks(" at line 1 column ")
            .has(&escaped(&message))
            .has("Nothing was changed.")
            .has(&format!(
                r#"value="{value}" spellcheck="false" autocomplete="off" aria-invalid="true""#
            ));
        let hint = api.body["error"]["hint"]
            .as_str()
            .expect("the API gives a hint");
        page.has(&escaped(hint));
        assert_eq!(
            s.get("/v1/queue/get/jobs").await.data(),
            &before,
            "{field}={value}"
        );
    }
    // Part of a backoff: its first delay is required, as in the API.
    let part = me
        .post_form(
            path,
            &form(&[("retry_backoff.multiplier", "2"), ("max_retries", "9")]),
        )
        .await;
    assert_eq!(part.status, StatusCode::BAD_REQUEST);
    part.has("retry_backoff.initial_seconds is required");
    let bad_priority = me
        .post_form(path, &form(&[("enable_priority", "maybe")]))
        .await;
    assert_eq!(bad_priority.status, StatusCode::BAD_REQUEST);
    bad_priority.has("enable_priority");
    assert_eq!(s.get("/v1/queue/get/jobs").await.data(), &before);

    // Not from the dashboard (CSRF).
    let evil = me
        .send(
            me.http
                .post(s.url(path))
                .header(reqwest::header::ORIGIN, "http://evil.example")
                .header("content-type", "application/x-www-form-urlencoded")
                .body("max_retries=9"),
        )
        .await;
    assert_eq!(evil.status, StatusCode::FORBIDDEN);
    // A key without admin may look, not change.
    let reader = s.scoped_key("alpha", "read", "*").await;
    let ro = Browser::signed_in(&s, &reader);
    assert_eq!(ro.get(path).await.status, StatusCode::OK);
    let refused = ro.post_form(path, &form(&[("max_retries", "9")])).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    refused.has("admin");
    // A DLQ outside the key's patterns is not found for it.
    s.post("/v1/queue/create", json!({"name": "secret"}))
        .await
        .ok();
    let narrow = s.scoped_key("alpha", "full", "jobs*").await;
    let hidden = Browser::signed_in(&s, &narrow)
        .post_form(path, &form(&[("dead_letter_queue", "secret")]))
        .await;
    assert_eq!(hidden.status, StatusCode::NOT_FOUND);
    hidden.has("queue &quot;secret&quot; not found");
    assert_eq!(s.get("/v1/queue/get/jobs").await.data(), &before);
    // An unknown queue.
    assert_eq!(
        me.get("/dashboard/queues/nope/settings").await.status,
        StatusCode::NOT_FOUND
    );
    let gone = me
        .post_form("/dashboard/queues/nope/settings", &form(&[]))
        .await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
}

async fn fifo_settings_have_no_priority(b: Backend) {
    let s = TestServer::start(b).await;
    let me = Browser::signed_in(&s, &s.key);
    s.post(
        "/v1/queue/create",
        json!({"name": "orders", "type": "fifo"}),
    )
    .await
    .ok();
    let page = me.get("/dashboard/queues/orders/settings").await;
    page.lacks(r#"name="enable_priority""#)
        .has("it has no priority setting");
    let mut f = form(&[("max_retries", "4"), ("dead_letter_queue", "orders-dlq")]);
    f.retain(|(k, _)| *k != "enable_priority");
    let saved = me.post_form("/dashboard/queues/orders/settings", &f).await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.body);
    let q = s.get("/v1/queue/get/orders").await.data().clone();
    assert_eq!(q["max_retries"], 4);
    assert_eq!(q["type"], "fifo");
}
