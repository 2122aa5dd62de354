//! Cron as clients written for Infrai send it (issue 26 parts 8 and 9):
//! `secret`, `retry` and `timeout_seconds` on a task schedule are honoured
//! (its runs signed with the client's secret, retried and timed out as
//! asked), refused where they mean nothing, and `on_failure_webhook` is
//! refused with a hint, never ignored; a create retried with its
//! `idempotency_key` gives the secret back; a run into a queue that does
//! not exist yet creates it. And the small refusals: control characters in
//! `cron_expr`, a time out of range said to be so, every queue-level field
//! of a push_subscribe named. Both stores.

use serde_json::{Value, json};

use crate::{
    both,
    cron::{create, drain, tick},
    harness::{Backend, TestServer},
    push::{self, receiver::Receiver},
};

both!(a_task_run_is_signed_with_the_secret_the_client_sent);
both!(a_retried_create_gives_back_the_generated_secret);
both!(delivery_settings_are_refused_where_they_mean_nothing);
both!(a_run_into_a_missing_queue_creates_it);
both!(control_characters_in_cron_expr_are_refused);
both!(a_time_out_of_range_is_said_to_be);
both!(push_subscribe_names_every_queue_level_field);

const SECRET: &str = "client-chosen-secret-0123";

fn task_queue(id: &str) -> String {
    format!("cron-task-{}", id.trim_start_matches("cron_"))
}

fn refusal(r: &crate::answer::Res) -> (String, String) {
    let message = r.err(400, "INVALID_PARAMS");
    let hint = r.body["error"]["hint"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(!hint.is_empty(), "no hint: {}", r.body);
    (message, hint)
}

async fn a_task_run_is_signed_with_the_secret_the_client_sent(b: Backend) {
    let s = TestServer::start_with(b, push::config()).await;
    let receiver = Receiver::answering(200).await;
    let body = json!({
        "cron_expr": "*/10 * * * * *",
        "task": receiver.url("/run"),
        "secret": SECRET,
        "retry": 5,
        "timeout_seconds": 7,
        "idempotency_key": "setup-1",
    });
    let j = create(&s, body.clone()).await;
    assert_eq!(j["secret"], SECRET, "{j}");
    let id = j["job_id"].as_str().unwrap().to_owned();
    // Its queue retries a failed delivery 5 times; each attempt has 7 s.
    let queue = task_queue(&id);
    let q = s.get(&format!("/v1/queue/get/{queue}")).await;
    assert_eq!(q.ok().data()["max_retries"], 5, "{}", q.body);
    let subs = s
        .get(&format!("/v1/queue/push_subscriptions/{queue}"))
        .await;
    assert_eq!(
        subs.ok().data()["items"][0]["timeout_seconds"],
        7,
        "{}",
        subs.body
    );
    // A retried create answers the same, the secret included.
    let again = s.post("/v1/cron/create", body).await;
    again.ok();
    assert_eq!(again.body["metadata"]["idempotent_replay"], true);
    assert_eq!(again.data()["job_id"], id.as_str());
    assert_eq!(again.data()["secret"], SECRET);

    tick(&s, 10).await;
    let seen = receiver.wait_for(1).await;
    onceq::push::verify_request(
        SECRET,
        &seen[0].headers,
        &seen[0].body,
        s.clock.now(),
        onceq::push::DEFAULT_TOLERANCE,
    )
    .expect("signed with the secret the client sent");
}

async fn a_retried_create_gives_back_the_generated_secret(b: Backend) {
    let s = TestServer::in_process(b).await;
    let body = json!({"cron_expr": "@daily", "task": "https://hooks.example.com/run", "idempotency_key": "lost-1"});
    let first = create(&s, body.clone()).await;
    let secret = first["secret"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("whsec_"), "{first}");
    let again = s.post("/v1/cron/create", body).await;
    again.ok();
    assert_eq!(again.body["metadata"]["idempotent_replay"], true);
    assert_eq!(
        again.data(),
        &first,
        "the same answer: a client that lost the first learns the secret"
    );
    assert_eq!(
        s.get("/v1/cron/list").await.data()["items"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

async fn delivery_settings_are_refused_where_they_mean_nothing(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.post("/v1/queue/create", json!({"name": "reports"}))
        .await
        .ok();
    let task = "https://hooks.example.com/run";
    // On a queue schedule: every one given is named.
    let r = s
        .post(
            "/v1/cron/create",
            json!({"cron_expr": "@daily", "queue": "reports", "secret": SECRET, "retry": 2}),
        )
        .await;
    let (message, hint) = refusal(&r);
    assert!(message.starts_with("secret:"), "{message}");
    assert!(message.contains("got secret, retry"), "{message}");
    assert!(hint.contains("task"), "{hint}");
    let r = s
        .post(
            "/v1/cron/create",
            json!({"cron_expr": "@daily", "queue": "reports", "timeout_seconds": 5}),
        )
        .await;
    assert!(refusal(&r).0.contains("timeout_seconds"));
    // on_failure_webhook: refused everywhere, pointing at the event.
    for target in [json!({"queue": "reports"}), json!({"task": task})] {
        let mut body = json!({"cron_expr": "@daily", "on_failure_webhook": "https://hooks.example.com/failed"});
        body.as_object_mut()
            .unwrap()
            .extend(target.as_object().unwrap().clone());
        let r = s.post("/v1/cron/create", body).await;
        let (message, hint) = refusal(&r);
        assert!(message.starts_with("on_failure_webhook"), "{message}");
        assert!(hint.contains("cron.run_failed"), "{hint}");
    }
    // Out of range on a task.
    for (extra, field) in [
        (json!({"retry": 101}), "retry"),
        (json!({"retry": -1}), "retry"),
        (json!({"timeout_seconds": 0}), "timeout_seconds"),
        (json!({"timeout_seconds": 301}), "timeout_seconds"),
        (json!({"secret": "short"}), "secret"),
        (json!({"secret": "has a space in it, sadly"}), "secret"),
        (json!({"retry": "3"}), "retry"),
    ] {
        let mut body = json!({"cron_expr": "@daily", "task": task});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let r = s.post("/v1/cron/create", body.clone()).await;
        let message = r.err(400, "INVALID_PARAMS");
        assert!(message.contains(field), "{body}: {message}");
    }
    assert_eq!(
        s.get("/v1/cron/list").await.data()["items"],
        json!([]),
        "nothing stored"
    );
    // On update: set at create, refused (named) after.
    let j = create(&s, json!({"cron_expr": "@daily", "task": task})).await;
    let id = j["job_id"].as_str().unwrap();
    for (extra, field) in [
        (json!({"secret": SECRET}), "secret"),
        (
            json!({"retry": 1, "timeout_seconds": 9}),
            "got retry, timeout_seconds",
        ),
        (json!({"on_failure_webhook": task}), "on_failure_webhook"),
    ] {
        let mut body = json!({"job_id": id, "cron_expr": "@hourly"});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let r = s.post("/v1/cron/update", body).await;
        assert!(refusal(&r).0.contains(field), "{}", r.body);
    }
    let after = s.get(&format!("/v1/cron/get/{id}")).await;
    assert_eq!(after.data()["cron_expr"], "@daily", "nothing changed");
}

async fn a_run_into_a_missing_queue_creates_it(b: Backend) {
    let s = TestServer::in_process(b).await;
    let j = create(
        &s,
        json!({"cron_expr": "*/10 * * * * *", "queue": "fresh", "payload": {"n": 1}}),
    )
    .await;
    assert_eq!(j["queue"], "fresh");
    s.get("/v1/queue/get/fresh")
        .await
        .err(404, "QUEUE_NOT_FOUND");
    tick(&s, 10).await;
    s.get("/v1/queue/get/fresh").await.ok();
    let got = drain(&s, "fresh").await;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0]["payload"], json!({"n": 1}));
    // An update to a queue not there yet is accepted the same way.
    let id = j["job_id"].as_str().unwrap();
    s.post("/v1/cron/update", json!({"job_id": id, "queue": "later"}))
        .await
        .ok();
    // Still only where the key may publish.
    let narrow = s.scoped_key("alpha", "full", "b-*").await;
    s.post_as(
        &narrow,
        "/v1/cron/create",
        json!({"cron_expr": "@daily", "queue": "a-fresh"}),
    )
    .await
    .err(403, "FORBIDDEN");
}

async fn control_characters_in_cron_expr_are_refused(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.post("/v1/queue/create", json!({"name": "reports"}))
        .await
        .ok();
    for expr in ["* * * * *\n", "*\t* * * *", "* * * * *\u{0}", "@daily\r"] {
        let r = s
            .post(
                "/v1/cron/create",
                json!({"cron_expr": expr, "queue": "reports"}),
            )
            .await;
        let (message, _) = refusal(&r);
        assert!(
            message.starts_with("cron_expr") && message.contains("control"),
            "{expr:?}: {message}"
        );
    }
    assert_eq!(s.get("/v1/cron/list").await.data()["items"], json!([]));
    let j = create(&s, json!({"cron_expr": "@daily", "queue": "reports"})).await;
    let r = s
        .post(
            "/v1/cron/update",
            json!({"job_id": j["job_id"], "cron_expr": "@hourly\n"}),
        )
        .await;
    assert!(refusal(&r).0.contains("control"));
}

async fn a_time_out_of_range_is_said_to_be(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.post("/v1/queue/create", json!({"name": "reports"}))
        .await
        .ok();
    let r = s
        .post(
            "/v1/cron/create",
            json!({"run_at": "9999-12-31T23:59:59Z", "queue": "reports"}),
        )
        .await;
    let (message, hint) = refusal(&r);
    assert!(
        message.contains("out of range") && message.contains("9999-12-30T22:00:00"),
        "{message}"
    );
    assert!(!message.contains("not an RFC 3339"), "{message}");
    assert!(hint.contains("range"), "{hint}");
    for bad in ["tomorrow", "2026-13-01T00:00:00Z", "2026-07-01"] {
        let r = s
            .post(
                "/v1/cron/create",
                json!({"run_at": bad, "queue": "reports"}),
            )
            .await;
        assert!(
            refusal(&r).0.contains("not an RFC 3339"),
            "{bad}: {}",
            r.body
        );
    }
    let r = s.get("/v1/account/usage?from=9999-12-31T23:59:59Z").await;
    let message = r.err(400, "INVALID_PARAMS");
    assert!(
        message.contains("from") && message.contains("out of range"),
        "{message}"
    );
}

async fn push_subscribe_names_every_queue_level_field(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.post("/v1/queue/create", json!({"name": "jobs"}))
        .await
        .ok();
    let r = s
        .post(
            "/v1/queue/push_subscribe/jobs",
            json!({"url": "https://hooks.example.com/a", "max_retries": 3, "visibility_timeout": 30, "dead_letter_queue": "x"}),
        )
        .await;
    let (message, hint) = refusal(&r);
    for field in ["max_retries", "visibility_timeout", "dead_letter_queue"] {
        assert!(message.contains(field), "{field}: {message}");
        assert!(hint.contains(field), "{field}: {hint}");
    }
    let subs: Value = s
        .get("/v1/queue/push_subscriptions/jobs")
        .await
        .data()
        .clone();
    assert_eq!(subs["items"], json!([]));
}
