//! A message's whole life in the dashboard over HTTP: the message page
//! (state wherever the message is, last error, attempts, a completed one's
//! result), the dead-letter list's errors, the completed-jobs page, its
//! paging and its refusals. Cancel is in `dashboard_cancel`.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::both;
use crate::dashboard::Browser;
use crate::harness::{Backend, TestServer};

both!(message_page_shows_last_error_and_attempts);
both!(dead_letters_list_their_last_error);
both!(completed_page_lists_kept_messages_with_results);
both!(completed_page_pages_by_cursor_and_refuses_bad_ones);

pub(crate) async fn consume(s: &TestServer, queue: &str, max: i64) -> Vec<Value> {
    let r = s
        .post(
            "/v1/queue/consume",
            json!({"queue": queue, "max_messages": max}),
        )
        .await;
    r.ok().data()["items"].as_array().unwrap().clone()
}

async fn nack(s: &TestServer, queue: &str, item: &Value, error: &str, requeue: bool) -> Value {
    let r = s
        .post(
            "/v1/queue/nack",
            json!({"queue": queue, "message_id": item["message_id"], "receipt": item["receipt"],
                   "error": error, "requeue": requeue}),
        )
        .await;
    r.ok().data().clone()
}

async fn ack(s: &TestServer, queue: &str, item: &Value, result: Option<Value>) {
    let mut body =
        json!({"queue": queue, "message_id": item["message_id"], "receipt": item["receipt"]});
    if let Some(result) = result {
        body["result"] = result;
    }
    let r = s.post("/v1/queue/ack", body).await;
    assert_eq!(r.ok().data()["acked"], true);
}

pub(crate) async fn keeping(s: &TestServer, queue: &str) {
    s.post(
        "/v1/queue/create",
        json!({"name": queue, "completed_retention_seconds": 3600}),
    )
    .await
    .ok();
}

const LONG_TAIL: &str = "the tail of a long error that only the unfolded text shows";

async fn message_page_shows_last_error_and_attempts(b: Backend) {
    let s = TestServer::start(b).await;
    let me = Browser::signed_in(&s, &s.key);
    let id = s.publish("jobs", json!({"n": 1})).await;
    let item = consume(&s, "jobs", 1).await.remove(0);
    nack(&s, "jobs", &item, "boom <script>alert(1)</script>", true).await;
    let long = format!("Traceback:\n{}\n{LONG_TAIL}", "  frame\n".repeat(40));
    let item = consume(&s, "jobs", 1).await.remove(0);
    nack(&s, "jobs", &item, &long, true).await;

    let page = me
        .get(&format!("/dashboard/queues/jobs/messages/{id}"))
        .await;
    assert_eq!(page.status, StatusCode::OK);
    page.has(r#"id="message-last-error""#)
        .has(r#"id="attempts""#)
        .has("boom &lt;script&gt;alert(1)&lt;/script&gt;")
        .lacks("<script>alert(1)")
        // The long one is folded: its first line as the summary, the whole
        // text inside.
        .has(r#"<details class="fold"><summary><code class="error-text">Traceback:</code></summary>"#)
        .has(LONG_TAIL)
        .has(r#"class="outcome outcome-nacked""#)
        .has(r#"id="cancel-one""#)
        .has(r#"<span class="badge badge-available">available</span>"#);
    // Two attempts, newest first: delivery 2 above delivery 1.
    let second = page
        .body
        .find(r#"data-label="Delivery">2<"#)
        .expect("delivery 2");
    let first = page
        .body
        .find(r#"data-label="Delivery">1<"#)
        .expect("delivery 1");
    assert!(second < first, "newest first");
    // The live fragment carries the same.
    me.get_htmx(&format!("/dashboard/queues/jobs/messages/{id}/live"))
        .await
        .has(r#"id="message-last-error""#)
        .has(r#"id="attempts""#);

    // A message never handed out says so; no error box.
    let fresh = s.publish("jobs", json!({"n": 2})).await;
    me.get(&format!("/dashboard/queues/jobs/messages/{fresh}"))
        .await
        .has(r#"id="attempts-none""#)
        .lacks(r#"id="message-last-error""#);
}

async fn dead_letters_list_their_last_error(b: Backend) {
    let s = TestServer::start(b).await;
    let me = Browser::signed_in(&s, &s.key);
    let id = s.publish("jobs", json!({"n": 1})).await;
    let item = consume(&s, "jobs", 1).await.remove(0);
    let long = format!("disk full & <b>gone</b> {}END-OF-ERROR", "x".repeat(300));
    assert_eq!(
        nack(&s, "jobs", &item, &long, false).await["dead_lettered"],
        true
    );
    let quiet = crate::dashboard::dead_letter(&s, "jobs", json!({"n": 2})).await;

    let page = me.get("/dashboard/queues/jobs/dlq").await;
    page.has(r#"id="dead-letters""#)
        .has(&format!(r#"id="error-{id}""#))
        .has("disk full &amp; &lt;b&gt;gone&lt;/b&gt; xxx")
        // Cut in the list; whole on the message page.
        .lacks("END-OF-ERROR")
        .has(r#"<th class="num" scope="col">Deliveries</th>"#)
        .has(&format!(
            r#"id="error-{quiet}"><span class="muted">none given</span>"#
        ));
    me.get_htmx("/dashboard/queues/jobs/dlq/live")
        .await
        .has(&format!(r#"id="error-{id}""#));

    // Its page, through the source queue: dead-lettered, the whole error,
    // and no cancel (the DLQ's page redrives or deletes it).
    me.get(&format!("/dashboard/queues/jobs/messages/{id}"))
        .await
        .has(r#"<span class="badge badge-dead">dead-lettered</span>"#)
        .has("END-OF-ERROR")
        .has(r#"id="message-dead-lettered""#)
        .has(r#"class="outcome outcome-dead_lettered""#)
        .lacks(r#"id="cancel-one""#);
}

async fn completed_page_lists_kept_messages_with_results(b: Backend) {
    let s = TestServer::start(b).await;
    let me = Browser::signed_in(&s, &s.key);
    keeping(&s, "keep").await;
    let done = s.publish("keep", json!({"n": 1})).await;
    let item = consume(&s, "keep", 1).await.remove(0);
    ack(
        &s,
        "keep",
        &item,
        Some(json!({"rows": 3, "note": "<i>fine</i>"})),
    )
    .await;
    let gone = s.publish("keep", json!({"n": 2})).await;
    s.post(
        "/v1/queue/cancel",
        json!({"queue": "keep", "message_id": gone}),
    )
    .await
    .ok();
    let waiting = s.publish("keep", json!({"n": 3})).await;

    let page = me.get("/dashboard/queues/keep/completed").await;
    assert_eq!(page.status, StatusCode::OK);
    page.has(r#"id="finished""#)
        .has(&format!(r#"href="/dashboard/queues/keep/messages/{done}""#))
        .has(&format!(r#"href="/dashboard/queues/keep/messages/{gone}""#))
        .lacks(&waiting)
        .has(r#"<span class="badge badge-completed">completed</span>"#)
        .has(r#"<span class="badge badge-cancelled">cancelled</span>"#)
        .has(r#"&lt;i&gt;fine&lt;/i&gt;"#)
        .lacks("<i>fine</i>")
        .lacks(r#"id="finished-older""#);
    // The queue page links to it.
    me.get("/dashboard/queues/keep")
        .await
        .has(r#"id="completed-link" href="/dashboard/queues/keep/completed""#);

    // The completed message's page: its state, when, and the result.
    me.get(&format!("/dashboard/queues/keep/messages/{done}"))
        .await
        .has(r#"<span class="badge badge-completed">completed</span>"#)
        .has(r#"id="message-finished-at""#)
        .has(r#"id="message-result""#)
        .has("&quot;rows&quot;: 3")
        .has(r#"class="outcome outcome-acked""#)
        .lacks(r#"id="cancel-one""#)
        .lacks(r#"id="delete-one""#);
    me.get(&format!("/dashboard/queues/keep/messages/{gone}"))
        .await
        .has(r#"<span class="badge badge-cancelled">cancelled</span>"#)
        .lacks(r#"id="message-result""#);

    // A queue that keeps nothing says how to keep them.
    s.publish("plain", json!({"n": 1})).await;
    me.get("/dashboard/queues/plain/completed")
        .await
        .has(r#"id="finished-off""#)
        .has("completed_retention_seconds")
        .lacks(r#"id="finished""#);
    let unknown = me.get("/dashboard/queues/nope/completed").await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
}

async fn completed_page_pages_by_cursor_and_refuses_bad_ones(b: Backend) {
    let s = TestServer::start(b).await;
    let me = Browser::signed_in(&s, &s.key);
    keeping(&s, "keep").await;
    let total = onceq_server::dashboard::finished::PAGE_SIZE as usize + 3;
    let messages: Vec<Value> = (0..total).map(|n| json!({"payload": {"n": n}})).collect();
    for chunk in messages.chunks(10) {
        s.publish_batch("keep", chunk).await;
    }
    let mut acked = 0;
    while acked < total {
        for item in consume(&s, "keep", 10).await {
            ack(&s, "keep", &item, None).await;
            acked += 1;
        }
    }
    let first = me.get("/dashboard/queues/keep/completed").await;
    let rows = |body: &str| {
        body.matches(r#"<span class="badge badge-completed">"#)
            .count()
    };
    assert_eq!(rows(&first.body), total - 3);
    let start = first
        .body
        .find(r#"id="finished-older" href=""#)
        .expect("an older page")
        + 26;
    let href = &first.body[start..];
    let href = href[..href.find('"').unwrap()].replace("&amp;", "&");
    assert!(
        href.starts_with("/dashboard/queues/keep/completed?before_at="),
        "{href}"
    );
    let older = me.get(&href).await;
    assert_eq!(older.status, StatusCode::OK);
    assert_eq!(rows(&older.body), 3);
    older.lacks(r#"id="finished-older""#).has("← Newest");

    for (query, field) in [
        ("before_at=yesterday&before_id=m1", "before_at"),
        (
            "before_at=2026-01-02T03:04:05Z&before_id=bad%07id",
            "before_id",
        ),
        ("before_id=m1", "before_at and before_id"),
    ] {
        let bad = me
            .get(&format!("/dashboard/queues/keep/completed?{query}"))
            .await;
        assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{query}");
        bad.has(field);
    }
}
