//! Task URLs: each run delivered through the push machinery (signed with
//! the secret the create answered, to a local receiver), the run recorded
//! `delivered`, or `failed` with the delivery's error once its message is
//! dead-lettered; the schedule's queue goes with it; a refused URL is
//! refused at create. Both stores.

use std::time::Duration;

use serde_json::{Value, json};

use crate::{
    both,
    cron::{create, tick},
    harness::{Backend, TestServer},
    push::{self, receiver::Receiver},
};

both!(a_task_run_is_delivered_signed_and_recorded);
both!(a_task_run_that_fails_for_good_is_recorded_failed);

/// Polls the schedule (every 10 ms, 30 s at most) until its newest run's
/// outcome is `outcome`.
async fn run_until(s: &TestServer, id: &str, outcome: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let j = s.get(&format!("/v1/cron/get/{id}")).await;
        j.ok();
        if j.data()["runs"][0]["outcome"] == outcome {
            return j.data().clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the run never became {outcome}: {}",
            j.body
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn a_task_run_is_delivered_signed_and_recorded(b: Backend) {
    let s = TestServer::start_with(b, push::config()).await;
    let receiver = Receiver::answering(200).await;
    let url = receiver.url("/run");
    let j = create(
        &s,
        json!({"cron_expr": "*/10 * * * * *", "task": url, "payload": {"job": "sync"}}),
    )
    .await;
    let id = j["job_id"].as_str().unwrap().to_owned();
    assert_eq!(j["task"], url);
    assert_eq!(j["queue"], Value::Null);
    let secret = j["secret"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("whsec_"), "{j}");
    // Shown once: get never shows it.
    let again = s.get(&format!("/v1/cron/get/{id}")).await;
    assert!(again.data().get("secret").is_none(), "{}", again.body);

    tick(&s, 10).await;
    let seen = receiver.wait_for(1).await;
    let delivery = &seen[0];
    assert_eq!(delivery.json()["payload"], json!({"job": "sync"}));
    onceq::push::verify_request(
        &secret,
        &delivery.headers,
        &delivery.body,
        s.clock.now(),
        onceq::push::DEFAULT_TOLERANCE,
    )
    .expect("signed with the schedule's secret");
    let j = run_until(&s, &id, "delivered").await;
    assert_eq!(j["runs"][0]["message_id"], delivery.json()["message_id"]);
    assert_eq!(j["run_count"], 1);

    // The schedule's queue goes with it.
    let queue = format!("cron-task-{}", id.trim_start_matches("cron_"));
    s.get(&format!("/v1/queue/get/{queue}")).await.ok();
    s.post(&format!("/v1/cron/delete/{id}"), json!({}))
        .await
        .ok();
    s.get(&format!("/v1/queue/get/{queue}"))
        .await
        .err(404, "QUEUE_NOT_FOUND");
}

async fn a_task_run_that_fails_for_good_is_recorded_failed(b: Backend) {
    let s = TestServer::start_with(b, push::config()).await;
    let receiver = Receiver::answering(500).await;
    let hooks = Receiver::answering(200).await;
    crate::webhooks::register(&s, &hooks.url("/events"), json!(["cron.run_failed"])).await;
    let j = create(
        &s,
        json!({"run_at": "2026-07-26T12:00:05Z", "task": receiver.url("/run")}),
    )
    .await;
    let id = j["job_id"].as_str().unwrap().to_owned();
    // Its queue is the project's like any other: no retries, so the first
    // failure is the last.
    let queue = format!("cron-task-{}", id.trim_start_matches("cron_"));
    s.post("/v1/queue/update", json!({"name": queue, "max_retries": 0}))
        .await
        .ok();
    tick(&s, 5).await;
    receiver.wait_for(1).await;
    let dlq = format!("{queue}-dlq");
    push::stats_until(&s, &dlq, |st| st["message_count"] == 1).await;
    let j = run_until(&s, &id, "failed").await;
    let error = j["runs"][0]["error"].as_str().unwrap();
    assert!(error.contains("500"), "{j}");
    assert_eq!(s.stats(&format!("{queue}-dlq")).await["message_count"], 1);
    // Said to the project's webhooks too (`cron.run_failed`).
    hooks.wait_for(1).await;
    let event = hooks.seen()[0].json();
    assert_eq!(event["type"], "cron.run_failed", "{event}");
    assert_eq!(event["data"]["schedule_id"], id.as_str());
    assert!(
        event["data"]["error"].as_str().unwrap().contains("500"),
        "{event}"
    );

    // A target the guard refuses is refused at create; nothing is stored.
    for url in [
        "http://hooks.example.com/x",
        "https://127.0.0.1.nip.io.invalid:99999/",
    ] {
        let r = s
            .post(
                "/v1/cron/create",
                json!({"cron_expr": "@hourly", "task": url}),
            )
            .await;
        let message = r.err(400, "INVALID_PARAMS");
        assert!(message.contains("task"), "{message}");
    }
    // A task schedule keeps its target.
    let r = s
        .post(
            "/v1/cron/update",
            json!({"job_id": id, "task": "https://hooks.example.com/other"}),
        )
        .await;
    assert!(r.err(400, "INVALID_PARAMS").contains("task"));
    assert_eq!(
        s.get("/v1/cron/list").await.data()["items"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}
