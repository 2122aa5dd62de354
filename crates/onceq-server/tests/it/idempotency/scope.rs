//! A replay respects the key's scope (issue 26 part 4): the answer kept
//! under an `Idempotency-Key` goes only to a key allowed to make the call
//! now. For EVERY operation `/openapi.json` documents with the header
//! (so a new keyed route without a case here fails the test), a key of the
//! same project that may not make the call (queue patterns `b-*`, or no
//! `accounts` for the admin API) repeats a wider key's call with the same
//! key and body: 403 `FORBIDDEN`, as without the header, and none of the
//! stored answer; the wider key still gets its replay.

use std::collections::BTreeSet;

use reqwest::Method;
use serde_json::{Value, json};

use super::call_as;
use super::{Who, alpha};
use crate::{
    both,
    harness::{Backend, TestServer},
};

both!(a_narrower_key_never_gets_the_stored_answer);
both!(a_replay_showing_payloads_needs_peek);
both!(an_answer_recorded_without_needs_replays_only_to_the_widest_key);

/// One keyed call, set up by the wide key: its path and body, and whether
/// it is the admin API's (made in project `ops`).
struct Case {
    path: String,
    body: Option<Value>,
    ops: bool,
}

fn case(path: impl Into<String>, body: Option<Value>) -> Case {
    Case {
        path: path.into(),
        body,
        ops: false,
    }
}

async fn queue(s: &TestServer, name: &str) {
    s.post("/v1/queue/create", json!({"name": name})).await.ok();
}

/// A message of `q` taken by the wide key: its id and receipt.
async fn taken(s: &TestServer, q: &str) -> (String, String) {
    s.publish(q, json!({"n": 1})).await;
    let r = s.post("/v1/queue/consume", json!({"queue": q})).await;
    r.ok();
    let m = &r.data()["items"][0];
    (
        m["message_id"].as_str().unwrap().to_owned(),
        m["receipt"].as_str().unwrap().to_owned(),
    )
}

async fn cron_job(s: &TestServer, q: &str) -> String {
    queue(s, q).await;
    let r = s
        .post(
            "/v1/cron/create",
            json!({"cron_expr": "@daily", "queue": q, "payload": {"secret": "cron-payload"}}),
        )
        .await;
    r.ok();
    r.data()["job_id"].as_str().unwrap().to_owned()
}

async fn webhook(s: &TestServer) -> String {
    let r = s
        .post(
            "/v1/account/webhooks/register",
            json!({"url": "https://hooks.example/w", "events": ["*"]}),
        )
        .await;
    r.ok();
    r.data()["id"].as_str().unwrap().to_owned()
}

async fn ops_key_id(s: &TestServer, ops: &str) -> String {
    let r = s
        .post_as(ops, "/v1/admin/keys/create", json!({"project": "shop"}))
        .await;
    r.ok();
    r.data()["key"]["key_id"].as_str().unwrap().to_owned()
}

/// The case of each documented keyed operation; a new one fails here
/// until it has a case.
async fn prepare(s: &TestServer, ops: &str, method: &str, template: &str) -> Case {
    match (method, template) {
        ("post", "/v1/queue/publish") => case(
            template,
            Some(json!({"queue": "a-pub", "payload": {"n": 1}})),
        ),
        ("post", "/v1/queue/publish_batch") => case(
            template,
            Some(json!({"queue": "a-pub", "messages": [{"payload": 1}]})),
        ),
        ("post", "/v1/queue/create") => case(template, Some(json!({"name": "a-new"}))),
        ("post", "/v1/queue/update") => {
            queue(s, "a-upd").await;
            case(template, Some(json!({"name": "a-upd", "max_retries": 5})))
        }
        ("post", "/v1/queue/pause/{queue}") => {
            queue(s, "a-pause").await;
            case("/v1/queue/pause/a-pause", None)
        }
        ("post", "/v1/queue/resume/{queue}") => {
            queue(s, "a-resume").await;
            s.post("/v1/queue/pause/a-resume", json!({})).await.ok();
            case("/v1/queue/resume/a-resume", None)
        }
        ("delete", "/v1/queue/delete/{queue}") => {
            queue(s, "a-del1").await;
            case("/v1/queue/delete/a-del1", None)
        }
        ("post", "/v1/queue/delete/{queue}") => {
            queue(s, "a-del2").await;
            case("/v1/queue/delete/a-del2", None)
        }
        ("post", "/v1/queue/delete") => {
            queue(s, "a-del3").await;
            case(template, Some(json!({"queue": "a-del3"})))
        }
        ("post", "/v1/queue/purge/{queue}") => {
            s.publish("a-purge", json!({"n": 1})).await;
            case("/v1/queue/purge/a-purge", None)
        }
        ("post", "/v1/queue/dlq/redrive/{queue}") => {
            // The narrower key may use the queue, not its dead-letter
            // queue: the need the redrive checked is the DLQ's.
            queue(s, "a-red-dlq").await;
            s.post(
                "/v1/queue/create",
                json!({"name": "b-red", "dead_letter_queue": "a-red-dlq"}),
            )
            .await
            .ok();
            case("/v1/queue/dlq/redrive/b-red", Some(json!({})))
        }
        ("post", "/v1/queue/ack") => {
            let (id, receipt) = taken(s, "a-ack").await;
            case(
                template,
                Some(json!({"queue": "a-ack", "message_id": id, "receipt": receipt})),
            )
        }
        ("post", "/v1/queue/ack_batch") => {
            let (id, receipt) = taken(s, "a-ackb").await;
            case(
                template,
                Some(
                    json!({"queue": "a-ackb", "entries": [{"message_id": id, "receipt": receipt}]}),
                ),
            )
        }
        ("post", "/v1/queue/nack") => {
            let (id, receipt) = taken(s, "a-nack").await;
            case(
                template,
                Some(json!({"queue": "a-nack", "message_id": id, "receipt": receipt})),
            )
        }
        ("post", "/v1/queue/extend") => {
            let (id, receipt) = taken(s, "a-ext").await;
            case(
                template,
                Some(
                    json!({"queue": "a-ext", "message_id": id, "receipt": receipt, "visibility_timeout": 60}),
                ),
            )
        }
        ("post", "/v1/queue/cancel") => {
            let id = s.publish("a-cancel", json!({"n": 1})).await;
            case(
                template,
                Some(json!({"queue": "a-cancel", "message_id": id})),
            )
        }
        ("post", "/v1/queue/push_subscribe/{queue}") => {
            queue(s, "a-secret").await;
            case(
                "/v1/queue/push_subscribe/a-secret",
                Some(json!({"url": "https://hooks.example.com/s"})),
            )
        }
        (m @ ("delete" | "post"), "/v1/queue/push_unsubscribe/{queue}/{subscription_id}") => {
            let q = format!("a-unsub-{m}");
            queue(s, &q).await;
            let sub = s
                .post(
                    &format!("/v1/queue/push_subscribe/{q}"),
                    json!({"url": "https://hooks.example.com/u"}),
                )
                .await;
            sub.ok();
            let id = sub.data()["subscription_id"].as_str().unwrap().to_owned();
            case(format!("/v1/queue/push_unsubscribe/{q}/{id}"), None)
        }
        ("post", "/v1/cron/create") => {
            queue(s, "a-cron").await;
            case(
                template,
                Some(json!({"cron_expr": "@daily", "queue": "a-cron", "payload": {"secret": 1}})),
            )
        }
        ("post", "/v1/cron/update") => {
            let id = cron_job(s, "a-cron-upd").await;
            case(
                template,
                Some(json!({"job_id": id, "cron_expr": "@hourly"})),
            )
        }
        ("post", "/v1/cron/pause/{job_id}") => {
            let id = cron_job(s, "a-cron-pause").await;
            case(format!("/v1/cron/pause/{id}"), None)
        }
        ("post", "/v1/cron/resume/{job_id}") => {
            let id = cron_job(s, "a-cron-resume").await;
            s.post(&format!("/v1/cron/pause/{id}"), json!({}))
                .await
                .ok();
            case(format!("/v1/cron/resume/{id}"), None)
        }
        (m @ ("delete" | "post"), "/v1/cron/delete/{job_id}") => {
            let id = cron_job(s, &format!("a-cron-del-{m}")).await;
            case(format!("/v1/cron/delete/{id}"), None)
        }
        ("post", "/v1/account/webhooks/register") => case(
            template,
            Some(json!({"url": "https://hooks.example/r", "events": ["*"]})),
        ),
        ("delete" | "post", "/v1/account/webhooks/delete/{id}") => {
            let id = webhook(s).await;
            case(format!("/v1/account/webhooks/delete/{id}"), None)
        }
        ("post", "/v1/admin/keys/revoke") => {
            let id = ops_key_id(s, ops).await;
            Case {
                ops: true,
                ..case(template, Some(json!({"key_id": id})))
            }
        }
        ("post", "/v1/admin/keys/limits") => {
            let id = ops_key_id(s, ops).await;
            Case {
                ops: true,
                ..case(template, Some(json!({"key_id": id, "rate_per_sec": 5})))
            }
        }
        ("post", "/v1/admin/projects/limits") => Case {
            ops: true,
            ..case(
                template,
                Some(json!({"project": "shop", "rate_per_sec": 9})),
            )
        },
        _ => panic!(
            "{method} {template} honours Idempotency-Key but has no case in idempotency::scope: add one"
        ),
    }
}

/// Every (method, path) `/openapi.json` documents with the header.
async fn keyed_operations(s: &TestServer) -> Vec<(String, String)> {
    let doc = s.send(Method::GET, "/openapi.json", None, None).await;
    let mut found = Vec::new();
    for (path, item) in doc.body["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let keyed = op["parameters"].as_array().is_some_and(|ps| {
                ps.iter()
                    .any(|p| p["name"] == "Idempotency-Key" && p["in"] == "header")
            });
            if keyed {
                found.push((method.clone(), path.clone()));
            }
        }
    }
    found
}

/// The strings of `v` (its leaves), for "none of the answer leaks".
fn strings(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::String(s) => {
            out.insert(s.clone());
        }
        Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
        Value::Object(o) => o.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

async fn a_narrower_key_never_gets_the_stored_answer(b: Backend) {
    let s = TestServer::in_process_with(b, crate::push::config()).await;
    let narrow = s.scoped_key("alpha", "full", "b-*").await;
    let ops = s.scoped_key("ops", "full,accounts", "*").await;
    let ops_narrow = s.scoped_key("ops", "full", "*").await;
    let operations = keyed_operations(&s).await;
    assert!(operations.len() >= 30, "{operations:?}");
    for (method, template) in operations {
        let c = prepare(&s, &ops, &method, &template).await;
        let (wide, narrower) = if c.ops {
            (
                Who {
                    key: &ops,
                    project: "ops",
                },
                Who {
                    key: &ops_narrow,
                    project: "ops",
                },
            )
        } else {
            (
                alpha(&s),
                Who {
                    key: &narrow,
                    project: "alpha",
                },
            )
        };
        let m = Method::from_bytes(method.to_ascii_uppercase().as_bytes()).unwrap();
        let what = format!("{method} {}", c.path);
        // One key per operation: the two forms of a capability (DELETE and
        // POST) share its key space.
        let k = format!("scope-{method}-{}", c.path);
        // Without the header the narrower key is refused (before the wide
        // key's call, which may delete what the path names)...
        let bare = s
            .send(m.clone(), &c.path, c.body.clone(), Some(narrower.key))
            .await;
        bare.err(403, "FORBIDDEN");
        let first = call_as(&s, wide, m.clone(), &c.path, c.body.clone(), &k).await;
        assert_eq!(first.status, 200, "{what}: {}", first.body);
        // ... and with it after the wide key's call, the same: never the
        // stored answer.
        let again = call_as(&s, narrower, m.clone(), &c.path, c.body.clone(), &k).await;
        let message = again.err(403, "FORBIDDEN");
        assert!(again.headers.get("idempotent-replayed").is_none(), "{what}");
        let mut sent = BTreeSet::new();
        if let Some(body) = &c.body {
            strings(body, &mut sent);
        }
        let mut kept = BTreeSet::new();
        strings(first.data(), &mut kept);
        let text = again.body.to_string();
        for leak in kept
            .iter()
            .filter(|v| v.len() >= 6 && !sent.contains(*v) && !c.path.contains(v.as_str()))
            // Queue names (the refusal names the queue) and times (the
            // manual clock makes every one alike) are not the answer's.
            .filter(|v| !v.starts_with("a-") && v.parse::<jiff::Timestamp>().is_err())
        {
            assert!(
                !text.contains(leak.as_str()),
                "{what}: the narrower key's answer holds {leak:?} of the stored one: {text}"
            );
        }
        assert!(again.body["error"]["hint"].is_string(), "{what}: {message}");
        // The wide key still gets its replay (publish's key is the
        // message's: its replay is the message's).
        let replay = call_as(&s, wide, m, &c.path, c.body.clone(), &k).await;
        assert_eq!(replay.status, 200, "{what}: {}", replay.body);
        assert_eq!(
            replay.body["metadata"]["idempotent_replay"], true,
            "{what}: {}",
            replay.body
        );
    }
}

/// An answer shaped with payloads (the first key held `peek`) is not
/// replayed to a key without it, which would have had them withheld.
async fn a_replay_showing_payloads_needs_peek(b: Backend) {
    let s = TestServer::in_process(b).await;
    queue(&s, "reports").await;
    let body = json!({"cron_expr": "@daily", "queue": "reports", "payload": {"card": "4111-1111"}});
    let first = super::call(&s, Method::POST, "/v1/cron/create", Some(body.clone()), "P").await;
    first.ok();
    assert_eq!(first.data()["payload"]["card"], "4111-1111");
    let blind = s.scoped_key("alpha", "read,admin", "*").await;
    let who = Who {
        key: &blind,
        project: "alpha",
    };
    let r = call_as(&s, who, Method::POST, "/v1/cron/create", Some(body), "P").await;
    let message = r.err(403, "FORBIDDEN");
    assert!(message.contains("peek"), "{message}");
    assert!(!r.body.to_string().contains("4111-1111"), "{}", r.body);
}

/// An entry recorded before the needs were (an older server sharing the
/// database): replayed only to a key allowed every queue and `peek`.
async fn an_answer_recorded_without_needs_replays_only_to_the_widest_key(b: Backend) {
    use onceq::idempotency::Fingerprint;
    use onceq_store::{LedgerAnswer, LedgerClaim, LedgerComplete, LedgerKey};
    let s = TestServer::in_process(b).await;
    let path = "/v1/queue/purge/a-old";
    let http = axum::http::Method::POST;
    let fingerprint = Fingerprint::of_request(&http, path, &axum::http::HeaderMap::new(), b"");
    let now = s.clock.now();
    let key = LedgerKey {
        project: "alpha".into(),
        capability: "queue.purge".into(),
        key: "old".into(),
    };
    s.state
        .store()
        .ledger_claim(LedgerClaim {
            key: key.clone(),
            fingerprint: *fingerprint.as_bytes(),
            token: "t".into(),
            locked_until: now + jiff::SignedDuration::from_secs(60),
            expires_at: now + jiff::SignedDuration::from_hours(24),
            now,
        })
        .await
        .unwrap();
    let answer = json!({"ok": true, "data": {"queue": "a-old", "purged": 41}, "metadata": {}});
    assert!(
        s.state
            .store()
            .ledger_complete(LedgerComplete {
                key,
                token: "t".into(),
                answer: LedgerAnswer {
                    status: 200,
                    headers: Vec::new(),
                    body: serde_json::to_vec(&answer).unwrap(),
                },
                now,
            })
            .await
            .unwrap()
    );
    // A key allowed the queue but not every queue: refused.
    let narrow = s.scoped_key("alpha", "full", "a-*").await;
    let who = Who {
        key: &narrow,
        project: "alpha",
    };
    call_as(&s, who, Method::POST, path, None, "old")
        .await
        .err(403, "FORBIDDEN");
    let r = super::call(&s, Method::POST, path, None, "old").await;
    r.ok();
    assert_eq!(r.data()["purged"], 41);
    assert_eq!(r.body["metadata"]["idempotent_replay"], true);
}
