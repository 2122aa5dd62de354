//! The dashboard pages what grows with a tenant: the overview shows one
//! page of queues ([`PAGE`] a page, by name) and links to the next, the
//! cron page one page of schedules; a live poll of an unchanged page
//! answers without the page (204 to htmx, 304 to anyone else), and a
//! changed one sends the page's rows only.

use reqwest::{StatusCode, header};
use serde_json::json;

use crate::both;
use crate::dashboard::Browser;
use crate::harness::{Backend, TestServer};

both!(overview_pages_queues_and_polls_send_what_changed);
both!(cron_page_pages_schedules);

/// The dashboard's page size (`onceq_server::dashboard::paging::PAGE_SIZE`).
const PAGE: usize = onceq_server::dashboard::paging::PAGE_SIZE;

async fn overview_pages_queues_and_polls_send_what_changed(b: Backend) {
    let s = TestServer::start(b).await;
    let me = Browser::signed_in(&s, &s.key);
    // Each queue comes with its dead-letter queue, `NAME-dlq`: two names
    // a queue, one page and two names more.
    let mut names = Vec::new();
    for n in 0..PAGE / 2 + 1 {
        let name = format!("q-{n:03}");
        s.post("/v1/queue/create", json!({"name": name})).await.ok();
        names.push(format!("{name}-dlq"));
        names.push(name);
    }
    names.sort();
    let total = names.len();
    let last_of_first = names[PAGE - 1].clone();
    let first_of_next = names[PAGE].clone();

    let first = me.get("/dashboard").await;
    assert_eq!(first.status, StatusCode::OK);
    first
        .has(r#"id="queue-q-000""#)
        .has(&format!(r#"id="queue-{last_of_first}""#))
        .lacks(&format!(r#"id="queue-{first_of_next}""#))
        .has(&format!(
            r#"rel="next" href="/dashboard?after={last_of_first}""#
        ))
        .has(&format!("Queues 1–{PAGE} of {total}"))
        .has(r#"hx-get="/dashboard/live/queues" hx-trigger="every 3s""#);
    assert_eq!(
        first.body.matches(r#"class="qname""#).count(),
        PAGE,
        "one page of rows"
    );

    let next = me.get(&format!("/dashboard?after={last_of_first}")).await;
    next.has(&format!(r#"id="queue-{first_of_next}""#))
        .lacks(r#"id="queue-q-000""#)
        .has(r#"href="/dashboard">← First page"#)
        .lacks(r#"rel="next""#)
        .has(&format!(
            r#"hx-get="/dashboard/live/queues?after={last_of_first}""#
        ));

    // The live fragment of that page: its rows only, with a tag.
    let live_path = format!("/dashboard/live/queues?after={last_of_first}");
    let live = me.get_htmx(&live_path).await;
    assert_eq!(live.status, StatusCode::OK);
    live.has(&format!(r#"id="queue-{first_of_next}""#))
        .lacks(r#"id="queue-q-000""#)
        .lacks("<html");
    let etag = live.headers[header::ETAG].to_str().unwrap().to_owned();
    assert!(
        next.body.contains(etag.trim_matches('"')),
        "the page's live region carries the tag it polls with"
    );

    // Unchanged: no page, to htmx or to anyone.
    let poll = |htmx: bool| {
        let mut req = me
            .http
            .get(s.url(&live_path))
            .header(header::IF_NONE_MATCH, &etag);
        if htmx {
            req = req.header("hx-request", "true");
        }
        me.send(req)
    };
    let unchanged = poll(true).await;
    assert_eq!(unchanged.status, StatusCode::NO_CONTENT);
    assert_eq!(unchanged.body, "");
    let unchanged = poll(false).await;
    assert_eq!(unchanged.status, StatusCode::NOT_MODIFIED);
    assert_eq!(unchanged.body, "");

    // A change on the page: the new rows, under a new tag.
    s.publish(&first_of_next, json!({"n": 1})).await;
    let changed = poll(true).await;
    assert_eq!(changed.status, StatusCode::OK);
    changed.has(r#"<td class="num" data-label="Available">1</td>"#);
    assert_ne!(changed.headers[header::ETAG].to_str().unwrap(), etag);
}

async fn cron_page_pages_schedules(b: Backend) {
    let s = TestServer::start(b).await;
    let me = Browser::signed_in(&s, &s.key);
    s.post("/v1/queue/create", json!({"name": "reports"}))
        .await
        .ok();
    for n in 0..=PAGE {
        crate::cron::create(
            &s,
            json!({"name": format!("job-{n:03}"), "cron_expr": "0 3 * * *", "queue": "reports", "payload": {}}),
        )
        .await;
    }
    let first = me.get("/dashboard/cron").await;
    assert_eq!(first.status, StatusCode::OK);
    assert_eq!(first.body.matches("<tr id=\"cron-").count(), PAGE);
    first
        .has(r#"rel="next" href="/dashboard/cron?page=2""#)
        .has(&format!("Schedules 1–{PAGE} of {}", PAGE + 1));
    let second = me.get("/dashboard/cron?page=2").await;
    assert_eq!(second.body.matches("<tr id=\"cron-").count(), 1);
    second
        .has(r#"href="/dashboard/cron">← First page"#)
        .lacks(r#"rel="next""#);
    let bad = me.get("/dashboard/cron?page=0").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    bad.has("page must be a whole number from 1");
}
