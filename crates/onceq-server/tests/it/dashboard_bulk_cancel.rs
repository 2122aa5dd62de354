//! The queue page's "Cancel…" on a selection over HTTP: the confirmation
//! step (nothing changed before it), one cancel per message whatever its
//! state (waiting, delayed, in flight), the report id by id (cancelled,
//! gone), kept as cancelled by a retaining queue, and the refusals
//! (not same-origin, no `admin`, unknown queue, nothing selected).

use reqwest::{StatusCode, header};
use serde_json::json;

use crate::both;
use crate::dashboard::Browser;
use crate::dashboard_life::{consume, keeping};
use crate::harness::{Backend, TestServer};

both!(selection_cancels_after_confirming_and_reports_each_id);
both!(selection_cancel_refusals_change_nothing);

const PATH: &str = "/dashboard/queues/keep/selected";

async fn selection_cancels_after_confirming_and_reports_each_id(b: Backend) {
    let s = TestServer::start(b).await;
    let me = Browser::signed_in(&s, &s.key);
    keeping(&s, "keep").await;
    let waiting = s.publish("keep", json!({"n": 1})).await;
    let held = s.publish("keep", json!({"n": 2})).await;
    let item = consume(&s, "keep", 1).await.remove(0);
    assert_eq!(item["message_id"], waiting.as_str());
    let delayed = {
        let r = s
            .post(
                "/v1/queue/publish",
                json!({"queue": "keep", "payload": 3, "delay_seconds": 3600}),
            )
            .await;
        r.ok().data()["message_id"].as_str().unwrap().to_owned()
    };
    me.get("/dashboard/queues/keep")
        .await
        .has(r#"<option value="cancel">Cancel…</option>"#);

    let selection = [
        ("action", "cancel"),
        ("id", waiting.as_str()),
        ("id", held.as_str()),
        ("id", delayed.as_str()),
        ("id", "m-ghost"),
    ];
    // The first POST asks, names each message, and changes nothing.
    let ask = me.post_form(PATH, &selection).await;
    assert_eq!(ask.status, StatusCode::OK);
    ask.has(r#"id="confirm-what""#)
        .has("Cancel in keep")
        .has("4 messages")
        .has(&format!("<li>{held}</li>"))
        .has(r#"name="action" value="cancel""#)
        .has(r#"name="confirm" value="yes""#);
    assert_eq!(s.stats("keep").await["message_count"], 3);

    let mut confirmed = selection.to_vec();
    confirmed.push(("confirm", "yes"));
    let done = me.post_form(PATH, &confirmed).await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.body);
    done.has("Cancelled <strong>3</strong> of 4 selected; 1 no longer in keep");
    for id in [&waiting, &held, &delayed] {
        let row = format!(r#"<tr id="cancel-{id}">"#);
        let at = done
            .body
            .find(&row)
            .unwrap_or_else(|| panic!("no row {row}"));
        let rest = &done.body[at..];
        let end = rest.find("</tr>").unwrap();
        assert!(
            rest[..end].contains("badge-cancelled"),
            "{id}: {}",
            &rest[..end]
        );
    }
    let ghost = &done.body[done.body.find(r#"<tr id="cancel-m-ghost">"#).unwrap()..];
    assert!(ghost[..ghost.find("</tr>").unwrap()].contains("gone: no longer in the queue"));
    assert_eq!(s.stats("keep").await["message_count"], 0);
    // The in-flight one's consumer can no longer ack it.
    let r = s
        .post(
            "/v1/queue/ack",
            json!({"queue": "keep", "message_id": waiting, "receipt": item["receipt"]}),
        )
        .await;
    assert_eq!(r.ok().data()["acked"], false);
    // The queue keeps them, as cancelled.
    me.get(&format!("/dashboard/queues/keep/messages/{delayed}"))
        .await
        .has(r#"<span class="badge badge-cancelled">cancelled</span>"#);
    // Again: every one is gone now, nothing changes.
    let again = me.post_form(PATH, &confirmed).await;
    again.has("Cancelled <strong>0</strong> of 4 selected");
}

async fn selection_cancel_refusals_change_nothing(b: Backend) {
    let s = TestServer::start(b).await;
    let me = Browser::signed_in(&s, &s.key);
    keeping(&s, "keep").await;
    let id = s.publish("keep", json!({"n": 1})).await;
    let body = format!("action=cancel&id={id}&confirm=yes");

    for origin in [Some("http://evil.example"), None] {
        let mut req = me
            .http
            .post(s.url(PATH))
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(body.clone());
        if let Some(o) = origin {
            req = req.header(header::ORIGIN, o);
        }
        assert_eq!(me.send(req).await.status, StatusCode::FORBIDDEN);
    }
    let none = me
        .post_form(PATH, &[("action", "cancel"), ("confirm", "yes")])
        .await;
    assert_eq!(none.status, StatusCode::BAD_REQUEST);
    none.has("id: select at least one message");
    let reader = s.scoped_key("alpha", "read", "*").await;
    let ro = Browser::signed_in(&s, &reader)
        .post_form(
            PATH,
            &[("action", "cancel"), ("id", &id), ("confirm", "yes")],
        )
        .await;
    assert_eq!(ro.status, StatusCode::FORBIDDEN);
    ro.has("admin");
    let unknown = me
        .post_form(
            "/dashboard/queues/nope/selected",
            &[("action", "cancel"), ("id", &id), ("confirm", "yes")],
        )
        .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    assert_eq!(s.stats("keep").await["message_count"], 1, "nothing changed");
}
