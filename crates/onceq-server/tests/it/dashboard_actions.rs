//! The dashboard's actions on a selection and its new views over HTTP:
//! "with selected" on a queue (promote, delete) and on its dead letters
//! (redrive, delete), each destructive one behind a confirmation step,
//! bounded to a page and refused with a reason naming the field; FIFO
//! groups; the bounded search in payloads; the failures chart.

use reqwest::StatusCode;
use serde_json::json;

use crate::both;
use crate::dashboard::{Browser, dead_letter};
use crate::harness::{Backend, TestServer};

both!(queue_selection_promotes_and_deletes_after_confirming);
both!(selection_refusals_change_nothing);
both!(dlq_selection_redrives_and_deletes_after_confirming);
both!(fifo_pages_show_groups_and_filter_by_group);
both!(payload_search_is_bounded_and_says_so);
both!(overview_charts_failures_and_dead_letters);

async fn publish_delayed(s: &TestServer, queue: &str, n: i64) -> String {
    let r = s
        .post(
            "/v1/queue/publish",
            json!({"queue": queue, "payload": {"n": n}, "delay_seconds": 3600}),
        )
        .await;
    r.ok();
    r.data()["message_id"].as_str().unwrap().to_owned()
}

async fn queue_selection_promotes_and_deletes_after_confirming(b: Backend) {
    let s = TestServer::start(b).await;
    let me = Browser::signed_in(&s, &s.key);
    let now = s.publish("jobs", json!({"n": 0})).await;
    let later = publish_delayed(&s, "jobs", 1).await;
    let doomed = publish_delayed(&s, "jobs", 2).await;

    let page = me.get("/dashboard/queues/jobs").await;
    page.has(
        r#"form class="bulk-bar" id="bulk" method="post" action="/dashboard/queues/jobs/selected""#,
    )
    .has(&format!(
        r#"value="{later}" form="bulk" id="sel-{later}" hx-preserve="true""#
    ))
    .has(r#"<option value="promote">"#)
    .has("priority <strong>on</strong>");
    // The live fragment keeps the checkboxes (and their ids, for hx-preserve).
    me.get_htmx("/dashboard/queues/jobs/live")
        .await
        .has(&format!(r#"id="sel-{doomed}""#));

    // The delayed message's own page offers both, as one-id selections.
    me.get(&format!("/dashboard/queues/jobs/messages/{later}"))
        .await
        .has(r#"id="promote-one""#)
        .has(r#"id="delete-one""#)
        .has(&format!(
            r#"<input type="hidden" name="id" value="{later}">"#
        ));
    me.get(&format!("/dashboard/queues/jobs/messages/{now}"))
        .await
        .lacks(r#"id="promote-one""#)
        .has(r#"id="delete-one""#);

    // Promote needs no confirmation: the delayed one runs now, the other
    // is reported as not delayed.
    let done = me
        .post_form(
            "/dashboard/queues/jobs/selected",
            &[("action", "promote"), ("id", &later), ("id", &now)],
        )
        .await;
    assert_eq!(done.status, StatusCode::SEE_OTHER);
    assert_eq!(
        done.location(),
        "/dashboard/queues/jobs?did=promoted&ok=1&held=0&gone=0&skipped=1"
    );
    me.get(done.location())
        .await
        .has("Promoted: 1 message; 1 message not delayed, left as they were.");
    let st = s.stats("jobs").await;
    assert_eq!(
        (st["available"].as_i64(), st["delayed"].as_i64()),
        (Some(2), Some(1))
    );

    // Delete asks first and changes nothing until confirmed.
    let ask = me
        .post_form(
            "/dashboard/queues/jobs/selected",
            &[("action", "delete"), ("id", &doomed)],
        )
        .await;
    assert_eq!(ask.status, StatusCode::OK);
    ask.has("Confirm: delete from jobs for good")
        .has(&format!(
            r#"<input type="hidden" name="id" value="{doomed}">"#
        ))
        .has(r#"name="confirm" value="yes""#);
    assert_eq!(s.stats("jobs").await["message_count"], 3);

    // One in flight is kept by its consumer; one unknown is reported gone.
    let r = s
        .post(
            "/v1/queue/consume",
            json!({"queue": "jobs", "max_messages": 1}),
        )
        .await;
    let held = r.ok().data()["items"][0]["message_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let done = me
        .post_form(
            "/dashboard/queues/jobs/selected",
            &[
                ("action", "delete"),
                ("id", &doomed),
                ("id", &held),
                ("id", "qmsg_nobody"),
                ("confirm", "yes"),
            ],
        )
        .await;
    assert_eq!(
        done.location(),
        "/dashboard/queues/jobs?did=deleted&ok=1&held=1&gone=1&skipped=0"
    );
    me.get(done.location()).await.has(
        "Deleted: 1 message; 1 message in flight, kept by their consumer; 1 message no longer here.",
    );
    assert_eq!(s.stats("jobs").await["message_count"], 2);
}

async fn selection_refusals_change_nothing(b: Backend) {
    let s = TestServer::start(b).await;
    let me = Browser::signed_in(&s, &s.key);
    let id = publish_delayed(&s, "jobs", 0).await;
    let path = "/dashboard/queues/jobs/selected";

    let none = me.post_form(path, &[("action", "promote")]).await;
    assert_eq!(none.status, StatusCode::BAD_REQUEST);
    none.has("id: select at least one message");
    let bad = me
        .post_form(path, &[("action", "explode"), ("id", &id)])
        .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    bad.has("action must be one of delete, promote");
    let ctl = me
        .post_form(path, &[("action", "promote"), ("id", "a\u{7}b")])
        .await;
    assert_eq!(ctl.status, StatusCode::BAD_REQUEST);
    ctl.has("id must not contain control characters");
    // More than a page.
    let many: Vec<String> = (0..51).map(|n| format!("qmsg_{n}")).collect();
    let mut form = vec![("action", "promote")];
    form.extend(many.iter().map(|m| ("id", m.as_str())));
    let over = me.post_form(path, &form).await;
    assert_eq!(over.status, StatusCode::BAD_REQUEST);
    over.has("at most 50 messages (one page) per action, got 51");
    // Not from the dashboard (CSRF).
    let evil = me
        .send(
            me.http
                .post(s.url(path))
                .header(reqwest::header::ORIGIN, "http://evil.example")
                .header("content-type", "application/x-www-form-urlencoded")
                .body(format!("action=promote&id={id}")),
        )
        .await;
    assert_eq!(evil.status, StatusCode::FORBIDDEN);
    // A key without admin.
    let reader = s.scoped_key("alpha", "read", "*").await;
    let ro = Browser::signed_in(&s, &reader)
        .post_form(path, &[("action", "promote"), ("id", &id)])
        .await;
    assert_eq!(ro.status, StatusCode::FORBIDDEN);
    ro.has("admin");
    // An unknown queue.
    let gone = me
        .post_form(
            "/dashboard/queues/nope/selected",
            &[("action", "promote"), ("id", &id)],
        )
        .await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
    assert_eq!(s.stats("jobs").await["delayed"], 1, "nothing changed");
    // A mangled tally in a link still shows the page.
    let odd = me
        .get("/dashboard/queues/jobs?did=deleted&ok=lots&held=-1")
        .await;
    assert_eq!(odd.status, StatusCode::OK);
    odd.has("Deleted: 0 messages.");
}

async fn dlq_selection_redrives_and_deletes_after_confirming(b: Backend) {
    let s = TestServer::start(b).await;
    let me = Browser::signed_in(&s, &s.key);
    let a = dead_letter(&s, "jobs", json!({"n": 1})).await;
    let b2 = dead_letter(&s, "jobs", json!({"n": 2})).await;
    let c = dead_letter(&s, "jobs", json!({"n": 3})).await;
    let path = "/dashboard/queues/jobs/dlq/selected";
    me.get("/dashboard/queues/jobs/dlq")
        .await
        .has(r#"id="dlq-bulk""#)
        .has(&format!(r#"form="dlq-bulk" id="sel-{a}""#));

    for action in ["redrive", "delete"] {
        let ask = me.post_form(path, &[("action", action), ("id", &a)]).await;
        assert_eq!(ask.status, StatusCode::OK, "{action}");
        ask.has("Confirm:").has(&a);
    }
    assert_eq!(s.stats("jobs").await["dead_lettered"], 3, "nothing moved");

    let done = me
        .post_form(
            path,
            &[
                ("action", "redrive"),
                ("id", &a),
                ("id", &b2),
                ("confirm", "yes"),
            ],
        )
        .await;
    assert_eq!(
        done.location(),
        "/dashboard/queues/jobs/dlq?did=redrove&ok=2&held=0&gone=0&skipped=0"
    );
    me.get(done.location())
        .await
        .has("Redrove to jobs: 2 messages.");
    let st = s.stats("jobs").await;
    assert_eq!(
        (st["available"].as_i64(), st["dead_lettered"].as_i64()),
        (Some(2), Some(1))
    );

    // Refusals change nothing: not from the dashboard, over a page, no id.
    let evil = me
        .send(
            me.http
                .post(s.url(path))
                .header(reqwest::header::ORIGIN, "http://evil.example")
                .header("content-type", "application/x-www-form-urlencoded")
                .body(format!("action=delete&confirm=yes&id={c}")),
        )
        .await;
    assert_eq!(evil.status, StatusCode::FORBIDDEN);
    let many: Vec<String> = (0..51).map(|n| format!("qmsg_{n}")).collect();
    let mut form = vec![("action", "delete"), ("confirm", "yes")];
    form.extend(many.iter().map(|m| ("id", m.as_str())));
    let over = me.post_form(path, &form).await;
    assert_eq!(over.status, StatusCode::BAD_REQUEST);
    over.has("at most 50 messages");
    let none = me
        .post_form(path, &[("action", "redrive"), ("confirm", "yes")])
        .await;
    assert_eq!(none.status, StatusCode::BAD_REQUEST);
    let promote = me
        .post_form(path, &[("action", "promote"), ("id", &c)])
        .await;
    assert_eq!(promote.status, StatusCode::BAD_REQUEST);
    promote.has("action must be one of redrive, delete");
    assert_eq!(s.stats("jobs").await["dead_lettered"], 1);

    let done = me
        .post_form(
            path,
            &[
                ("action", "delete"),
                ("id", &c),
                ("id", &a),
                ("confirm", "yes"),
            ],
        )
        .await;
    assert_eq!(
        done.location(),
        "/dashboard/queues/jobs/dlq?did=deleted&ok=1&held=0&gone=1&skipped=0"
    );
    let st = s.stats("jobs").await;
    assert_eq!(
        (st["available"].as_i64(), st["dead_lettered"].as_i64()),
        (Some(2), Some(0))
    );

    // The DLQ's patterns are checked as for single messages.
    let x = dead_letter(&s, "mail", json!({"n": 4})).await;
    let narrow = s.scoped_key("alpha", "admin,read", "mail").await;
    let refused = Browser::signed_in(&s, &narrow)
        .post_form(
            "/dashboard/queues/mail/dlq/selected",
            &[("action", "redrive"), ("id", &x), ("confirm", "yes")],
        )
        .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    refused.has("mail-dlq");
    assert_eq!(s.stats("mail").await["dead_lettered"], 1);
}

async fn fifo_pages_show_groups_and_filter_by_group(b: Backend) {
    let s = TestServer::start(b).await;
    let me = Browser::signed_in(&s, &s.key);
    s.post(
        "/v1/queue/create",
        json!({"name": "orders", "type": "fifo"}),
    )
    .await
    .ok();
    let mut ids = Vec::new();
    for (n, g) in ["a", "b", "a"].iter().enumerate() {
        let r = s
            .post(
                "/v1/queue/publish",
                json!({"queue": "orders", "payload": {"n": n}, "message_group_id": g}),
            )
            .await;
        ids.push(r.ok().data()["message_id"].as_str().unwrap().to_owned());
    }
    let page = me.get("/dashboard/queues/orders").await;
    page.has(r#"<th scope="col">Group</th>"#)
        .has(r#"href="/dashboard/queues/orders?group=a""#)
        .has(r#"<label for="group">Group</label>"#)
        .has("in order per message group")
        .lacks("priority <strong>");
    let a = me.get("/dashboard/queues/orders?group=a").await;
    a.has(&ids[0]).has(&ids[2]).lacks(&ids[1]);
    me.get_htmx("/dashboard/queues/orders/live?group=b")
        .await
        .has(&ids[1])
        .lacks(&ids[0]);
    me.get("/dashboard/queues/orders?group=zzz")
        .await
        .has("No messages in group &quot;zzz&quot;.");
    let bad = me.get("/dashboard/queues/orders?group=a%07").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    bad.has("group must not contain control characters");
    // A standard queue has no group column.
    s.publish("jobs", json!({"n": 1})).await;
    me.get("/dashboard/queues/jobs")
        .await
        .lacks(r#"<th scope="col">Group</th>"#);
}

async fn payload_search_is_bounded_and_says_so(b: Backend) {
    let s = TestServer::start(b).await;
    let me = Browser::signed_in(&s, &s.key);
    let alice = s.publish("jobs", json!({"user": "alice"})).await;
    let bob = s.publish("jobs", json!({"user": "bob"})).await;
    let page = me.get("/dashboard/queues/jobs?q=alice&in=payload").await;
    assert_eq!(page.status, StatusCode::OK);
    page.has(&alice)
        .lacks(&bob)
        .has(r#"id="search-bound""#)
        .has("among the newest <strong>2</strong> messages")
        .lacks("not searched")
        .has(r#"<option value="payload" selected>"#);
    // The id search does not look in payloads.
    me.get("/dashboard/queues/jobs?q=alice")
        .await
        .lacks(&format!(r#"id="msg-{alice}""#));
    me.get_htmx("/dashboard/queues/jobs/live?q=%22bob%22&in=payload")
        .await
        .has(&bob)
        .lacks(&alice);
    me.get("/dashboard/queues/jobs?q=carol&in=payload")
        .await
        .has("No message among the newest searched has");
    let bad = me.get("/dashboard/queues/jobs?q=x&in=everywhere").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    bad.has("in must be id or payload");
}

async fn overview_charts_failures_and_dead_letters(b: Backend) {
    let s = TestServer::start(b).await;
    let me = Browser::signed_in(&s, &s.key);
    let id = s.publish("jobs", json!({"n": 1})).await;
    s.post(
        "/v1/queue/consume",
        json!({"queue": "jobs", "max_messages": 1}),
    )
    .await
    .ok();
    let r = s
        .post(
            "/v1/queue/nack",
            json!({"queue": "jobs", "message_id": id, "requeue": true}),
        )
        .await;
    r.ok();
    dead_letter(&s, "mail", json!({"n": 2})).await;
    let live = me.get_htmx("/dashboard/live/queues").await;
    // jobs: one nack that requeued; mail: one that dead-lettered.
    let row = |q: &str| {
        let start = live.body.find(&format!(r#"id="queue-{q}""#)).unwrap();
        let end = live.body[start..].find("</tr>").unwrap() + start;
        live.body[start..end].to_owned()
    };
    assert!(
        row("jobs").contains(r#"<span class="rate-fail">1&#8239;/min failed</span>"#),
        "{}",
        row("jobs")
    );
    assert!(row("jobs").contains(r#"<span class="rate-dead">0&#8239;/min dead-lettered</span>"#));
    assert!(row("mail").contains(r#"<span class="rate-fail">1&#8239;/min failed</span>"#));
    assert!(row("mail").contains(r#"<span class="rate-dead">1&#8239;/min dead-lettered</span>"#));
    live.has("Failed (nacked or lease expired) and dead-lettered per 10 seconds");
}
