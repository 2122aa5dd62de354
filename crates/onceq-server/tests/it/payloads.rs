//! The payload rule (docs/security.md, "Payloads and `peek`"): a stored
//! payload (a message's, a completed one's result, a cron schedule's) is
//! shown by a call that does not consume it only to a key allowed `peek`
//! (`capability::PAYLOAD_ACTION`). Checked for every capability listed in
//! `capability::SHOWS_PAYLOADS` (a new one fails here until it has its
//! request below) and every dashboard page that shows a payload, on both
//! backends: without `peek` the record comes with `payload_withheld: true`
//! and none of the payloads' text; with it, the payloads.

use onceq_types::capability::SHOWS_PAYLOADS;
use serde_json::{Value, json};

use crate::{
    both,
    dashboard::Browser,
    harness::{Backend, Res, TestServer},
};

both!(api_answers_withhold_payloads_without_peek);
both!(dashboard_pages_withhold_payloads_without_peek);

/// Texts found only in the stored payloads and result.
const WAITING: &str = "ssn-waiting-111";
const DEAD: &str = "ssn-dead-222";
const DONE: &str = "ssn-done-333";
const RESULT: &str = "result-444";
const CRON: &str = "ssn-cron-555";
const ALL: [&str; 5] = [WAITING, DEAD, DONE, RESULT, CRON];

/// A queue `jobs` holding a waiting message, a dead letter and a completed
/// message with a result, and a cron schedule publishing into it.
struct Fixture {
    waiting: String,
    dead: String,
    done: String,
    cron: String,
}

async fn fixture(s: &TestServer) -> Fixture {
    s.post(
        "/v1/queue/create",
        json!({"name": "jobs", "completed_retention_seconds": 3600, "max_retries": 0}),
    )
    .await
    .ok();
    let dead = crate::dashboard::dead_letter(s, "jobs", json!({"ssn": DEAD})).await;
    let done = s.publish("jobs", json!({"ssn": DONE})).await;
    let got = s.post("/v1/queue/consume", json!({"queue": "jobs"})).await;
    let item = got.ok().data()["items"][0].clone();
    assert_eq!(item["message_id"], done.as_str());
    let acked = s
        .post(
            "/v1/queue/ack",
            json!({"queue": "jobs", "message_id": done, "receipt": item["receipt"], "result": {"r": RESULT}}),
        )
        .await;
    assert_eq!(acked.ok().data()["acked"], true);
    let waiting = s.publish("jobs", json!({"ssn": WAITING})).await;
    let cron = s
        .post(
            "/v1/cron/create",
            json!({"cron_expr": "0 * * * *", "queue": "jobs", "payload": {"ssn": CRON}, "idempotency_key": "cron-1"}),
        )
        .await;
    let cron = cron.ok().data()["job_id"].as_str().unwrap().to_owned();
    Fixture {
        waiting,
        dead,
        done,
        cron,
    }
}

/// Every answer of `capability_id` that can carry a stored payload, asked
/// with `key`, with the payload texts each should carry when shown.
async fn answers(
    s: &TestServer,
    f: &Fixture,
    id: &str,
    key: &str,
) -> Vec<(Res, Vec<&'static str>)> {
    let message = |m: &str| format!("/v1/queue/message/jobs/{m}");
    match id {
        "queue.message.get" => vec![
            (s.get_as(key, &message(&f.waiting)).await, vec![WAITING]),
            (s.get_as(key, &message(&f.dead)).await, vec![DEAD]),
            (s.get_as(key, &message(&f.done)).await, vec![DONE, RESULT]),
        ],
        // A replay answers the first schedule, whatever this body holds.
        "cron.create" => vec![(
            s.post_as(
                key,
                "/v1/cron/create",
                json!({"cron_expr": "0 * * * *", "queue": "jobs", "payload": {"other": 1}, "idempotency_key": "cron-1"}),
            )
            .await,
            vec![CRON],
        )],
        "cron.list" => vec![(s.get_as(key, "/v1/cron/list").await, vec![CRON])],
        "cron.get" => vec![(
            s.get_as(key, &format!("/v1/cron/get/{}", f.cron)).await,
            vec![CRON],
        )],
        "cron.update" => vec![(
            s.post_as(
                key,
                "/v1/cron/update",
                json!({"job_id": f.cron, "cron_expr": "30 * * * *"}),
            )
            .await,
            vec![CRON],
        )],
        "cron.pause" => vec![(
            s.post_as(key, &format!("/v1/cron/pause/{}", f.cron), json!({}))
                .await,
            vec![CRON],
        )],
        "cron.resume" => vec![(
            s.post_as(key, &format!("/v1/cron/resume/{}", f.cron), json!({}))
                .await,
            vec![CRON],
        )],
        other => panic!("{other} is in SHOWS_PAYLOADS: add its requests to this test"),
    }
}

/// Every `payload_withheld` of an answer (one record, or a list's items).
fn withheld_flags(data: &Value) -> Vec<bool> {
    let records: Vec<&Value> = match data.get("items") {
        Some(items) => items.as_array().unwrap().iter().collect(),
        None => vec![data],
    };
    assert!(!records.is_empty(), "no record in {data}");
    records
        .into_iter()
        .map(|r| r["payload_withheld"].as_bool().expect("payload_withheld"))
        .collect()
}

async fn api_answers_withhold_payloads_without_peek(b: Backend) {
    let s = TestServer::in_process(b).await;
    let f = fixture(&s).await;
    // `admin` for the cron changes; neither key may consume.
    let without = s.scoped_key("alpha", "read,admin", "*").await;
    let with = s.scoped_key("alpha", "read,admin,peek", "*").await;
    for cap in SHOWS_PAYLOADS {
        for (r, _) in answers(&s, &f, cap.id, &without).await {
            let text = r.body.to_string();
            for secret in ALL {
                assert!(!text.contains(secret), "{}: {secret} in {text}", cap.id);
            }
            assert!(
                withheld_flags(r.ok().data()).iter().all(|w| *w),
                "{}: {text}",
                cap.id
            );
            if cap.id == "queue.message.get" {
                assert!(r.data()["payload"].is_null() && r.data()["result"].is_null());
                // The rest of the record is there: state, attempts.
                assert!(r.data()["state"].is_string(), "{text}");
            }
        }
        for (r, shown) in answers(&s, &f, cap.id, &with).await {
            let text = r.body.to_string();
            for secret in shown {
                assert!(text.contains(secret), "{}: no {secret} in {text}", cap.id);
            }
            assert!(
                withheld_flags(r.ok().data()).iter().all(|w| !*w),
                "{}: {text}",
                cap.id
            );
        }
    }
    // A read-only key (the dashboard key of the docs' examples) reads the
    // record, not the payload; `full` holds `peek`.
    let read_only = s.scoped_key("alpha", "read", "*").await;
    let path = format!("/v1/queue/message/jobs/{}", f.done);
    let r = s.get_as(&read_only, &path).await;
    assert_eq!(r.ok().data()["payload_withheld"], true);
    assert!(!r.body.to_string().contains(DONE));
    let r = s.get(&path).await;
    assert_eq!(r.ok().data()["payload"], json!({"ssn": DONE}));
    assert_eq!(r.data()["result"], json!({"r": RESULT}));
    // `peek` adds payloads to what `read` answers; alone it allows no call.
    let peek_only = s.scoped_key("alpha", "peek", "*").await;
    let refused = s.get_as(&peek_only, &path).await;
    let message = refused.err(403, "FORBIDDEN");
    assert!(message.contains("read"), "{message}");
}

async fn dashboard_pages_withhold_payloads_without_peek(b: Backend) {
    let s = TestServer::start(b).await;
    let f = fixture(&s).await;
    let pages = |f: &Fixture| {
        let m = |id: &str| format!("/dashboard/queues/jobs/messages/{id}");
        vec![
            ("/dashboard/queues/jobs".to_owned(), vec![WAITING]),
            ("/dashboard/queues/jobs/live".to_owned(), vec![WAITING]),
            ("/dashboard/queues/jobs/dlq".to_owned(), vec![DEAD]),
            ("/dashboard/queues/jobs/dlq/live".to_owned(), vec![DEAD]),
            (
                "/dashboard/queues/jobs/completed".to_owned(),
                vec![DONE, RESULT],
            ),
            (m(&f.waiting), vec![WAITING]),
            (m(&f.dead), vec![DEAD]),
            (m(&f.done), vec![DONE, RESULT]),
            (format!("{}/live", m(&f.done)), vec![RESULT]),
            (format!("/dashboard/cron/{}", f.cron), vec![]),
            ("/dashboard/cron".to_owned(), vec![]),
            ("/dashboard".to_owned(), vec![]),
        ]
    };
    let without = s.scoped_key("alpha", "read", "*").await;
    let with = s.scoped_key("alpha", "read,peek", "*").await;
    let blind = Browser::signed_in(&s, &without);
    let seeing = Browser::signed_in(&s, &with);
    for (path, shown) in pages(&f) {
        let page = blind.get(&path).await;
        assert_eq!(page.status, 200, "{path}: {}", page.body);
        for secret in ALL {
            page.lacks(secret);
        }
        if !shown.is_empty() {
            page.has("withheld");
        }
        let page = seeing.get(&path).await;
        assert_eq!(page.status, 200, "{path}");
        for secret in shown {
            page.has(secret);
        }
        page.lacks("payload-withheld");
    }
    // A search in payloads tells which hold a text: refused without peek,
    // and the queue page does not offer it.
    let search = "/dashboard/queues/jobs?q=ssn-waiting&in=payload";
    let page = blind.get(search).await;
    assert_eq!(page.status, 403, "{}", page.body);
    page.lacks(WAITING).has("peek");
    blind
        .get("/dashboard/queues/jobs")
        .await
        .lacks(r#"option value="payload""#);
    let page = seeing.get(search).await;
    assert_eq!(page.status, 200);
    page.has(WAITING).has(&f.waiting);
}
