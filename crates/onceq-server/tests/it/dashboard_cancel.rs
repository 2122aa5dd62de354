//! The dashboard's "Cancel…" on a message page over HTTP: the confirmation
//! step, the cancel (waiting, in flight, kept as cancelled), its refusals
//! (same-origin, bad id, unknown queue, no `admin`, unknown message), and
//! the wake-up of a long poll when a FIFO head is cancelled.

use reqwest::{StatusCode, header};
use serde_json::{Value, json};

use crate::both;
use crate::dashboard::Browser;
use crate::dashboard_life::{consume, keeping};
use crate::harness::{Backend, TestServer};

both!(cancel_asks_first_then_cancels);
both!(cancel_refusals_change_nothing);
both!(cancelling_a_fifo_head_wakes_a_long_poll);

async fn cancel_asks_first_then_cancels(b: Backend) {
    let s = TestServer::start(b).await;
    let me = Browser::signed_in(&s, &s.key);
    let id = s.publish("jobs", json!({"n": 1})).await;
    let path = format!("/dashboard/queues/jobs/messages/{id}/cancel");
    me.get(&format!("/dashboard/queues/jobs/messages/{id}"))
        .await
        .has(&format!(r#"action="{path}""#));

    // The first POST asks, and changes nothing.
    let ask = me.post_form(&path, &[]).await;
    assert_eq!(ask.status, StatusCode::OK);
    ask.has(r#"id="confirm-what""#)
        .has(&format!("cancel message {id} of jobs"))
        .has(&format!(r#"action="{path}""#))
        .has(r#"name="confirm" value="yes""#);
    assert_eq!(s.stats("jobs").await["message_count"], 1);

    let done = me.post_form(&path, &[("confirm", "yes")]).await;
    assert_eq!(done.status, StatusCode::SEE_OTHER);
    assert_eq!(
        done.location(),
        format!("/dashboard/queues/jobs/messages/{id}?done=cancelled")
    );
    me.get(done.location())
        .await
        .has(&format!("Cancelled {id}."))
        .has("no longer in jobs");
    assert_eq!(s.stats("jobs").await["message_count"], 0);
    // Again: it is gone, nothing changed.
    let again = me.post_form(&path, &[("confirm", "yes")]).await;
    assert_eq!(
        again.location(),
        format!("/dashboard/queues/jobs/messages/{id}?done=gone")
    );
    me.get(again.location()).await.has("nothing changed");

    // An in-flight one: its consumer's ack then answers false.
    let held = s.publish("jobs", json!({"n": 2})).await;
    let item = consume(&s, "jobs", 1).await.remove(0);
    me.get(&format!("/dashboard/queues/jobs/messages/{held}"))
        .await
        .has(r#"id="cancel-one""#);
    let done = me
        .post_form(
            &format!("/dashboard/queues/jobs/messages/{held}/cancel"),
            &[("confirm", "yes")],
        )
        .await;
    assert!(
        done.location().ends_with("?done=cancelled"),
        "{}",
        done.location()
    );
    let r = s
        .post(
            "/v1/queue/ack",
            json!({"queue": "jobs", "message_id": held, "receipt": item["receipt"]}),
        )
        .await;
    assert_eq!(r.ok().data()["acked"], false);

    // In a queue that keeps finished messages, it stays as cancelled.
    keeping(&s, "keep").await;
    let kept = s.publish("keep", json!({"n": 3})).await;
    me.post_form(
        &format!("/dashboard/queues/keep/messages/{kept}/cancel"),
        &[("confirm", "yes")],
    )
    .await;
    me.get(&format!("/dashboard/queues/keep/messages/{kept}"))
        .await
        .has(r#"<span class="badge badge-cancelled">cancelled</span>"#);
}

async fn cancel_refusals_change_nothing(b: Backend) {
    let s = TestServer::start(b).await;
    let me = Browser::signed_in(&s, &s.key);
    let id = s.publish("jobs", json!({"n": 1})).await;
    let path = format!("/dashboard/queues/jobs/messages/{id}/cancel");

    // From another site, or with no origin at all: refused.
    let evil = me
        .send(
            me.http
                .post(s.url(&path))
                .header(header::ORIGIN, "http://evil.example")
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body("confirm=yes"),
        )
        .await;
    assert_eq!(evil.status, StatusCode::FORBIDDEN);
    let bare = me
        .send(
            me.http
                .post(s.url(&path))
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body("confirm=yes"),
        )
        .await;
    assert_eq!(bare.status, StatusCode::FORBIDDEN);

    // A bad id, an unknown queue.
    let bad = me
        .post_form(
            "/dashboard/queues/jobs/messages/bad%07id/cancel",
            &[("confirm", "yes")],
        )
        .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    bad.has("message id");
    let unknown = me
        .post_form(
            &format!("/dashboard/queues/nope/messages/{id}/cancel"),
            &[("confirm", "yes")],
        )
        .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);

    // A key that may only read: refused, before any confirmation.
    let reader = s.scoped_key("alpha", "read", "*").await;
    let them = Browser::signed_in(&s, &reader);
    let page = them
        .get(&format!("/dashboard/queues/jobs/messages/{id}"))
        .await;
    assert_eq!(page.status, StatusCode::OK);
    let refused = them.post_form(&path, &[("confirm", "yes")]).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);

    // A message the queue never held: said so, nothing else changes.
    let ghost = me
        .post_form(
            "/dashboard/queues/jobs/messages/m-ghost/cancel",
            &[("confirm", "yes")],
        )
        .await;
    assert_eq!(
        ghost.location(),
        "/dashboard/queues/jobs/messages/m-ghost?done=gone"
    );
    assert_eq!(s.stats("jobs").await["message_count"], 1);
}

/// A cancelled FIFO head lets its group's next message go: `Messages::cancel`
/// wakes a waiting consumer at once (its re-check of the store is further
/// off than its whole wait), whether the cancel comes from the dashboard
/// or the API.
async fn cancelling_a_fifo_head_wakes_a_long_poll(b: Backend) {
    let config = onceq_server::ServerConfig {
        long_poll_recheck: std::time::Duration::from_secs(60),
        ..Default::default()
    };
    let s = TestServer::in_process_with(b, config).await;
    let me = Browser::signed_in(&s, &s.key);
    s.post(
        "/v1/queue/create",
        json!({"name": "orders", "type": "fifo"}),
    )
    .await
    .ok();
    let mut heads = Vec::new();
    for n in 0..3 {
        let r = s
            .post(
                "/v1/queue/publish",
                json!({"queue": "orders", "payload": n, "message_group_id": "a"}),
            )
            .await;
        heads.push(r.ok().data()["message_id"].as_str().unwrap().to_owned());
    }
    let held = consume(&s, "orders", 1).await.remove(0);
    assert_eq!(held["message_id"], heads[0].as_str());
    // The head in flight is cancelled, once from the dashboard, then from
    // the API; each time the waiting consumer gets the next at once.
    for (cancelled, via_dashboard) in [(0, true), (1, false)] {
        let waiter = long_poll(&s, "orders");
        // Real time only to see the poll still waiting, as pause.rs does.
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert!(!waiter.is_finished(), "the group's head is in flight");
        let id = &heads[cancelled];
        if via_dashboard {
            let path = format!("/dashboard/queues/orders/messages/{id}/cancel");
            let done = me.post_form(&path, &[("confirm", "yes")]).await;
            assert!(
                done.location().ends_with("?done=cancelled"),
                "{}",
                done.location()
            );
        } else {
            let body = json!({"queue": "orders", "message_id": id});
            let r = s.post("/v1/queue/cancel", body).await;
            assert_eq!(r.ok().data()["cancelled"], true);
        }
        let got = tokio::time::timeout(std::time::Duration::from_secs(10), waiter)
            .await
            .expect("the cancel did not wake the long poll")
            .unwrap();
        assert_eq!(
            got["data"]["items"][0]["message_id"],
            heads[cancelled + 1].as_str()
        );
    }
}

/// A consume of `queue` on `s` waiting up to 20 s, over its own request.
fn long_poll(s: &TestServer, queue: &str) -> tokio::task::JoinHandle<Value> {
    let (http, url, key) = (s.http.clone(), s.url("/v1/queue/consume"), s.key.clone());
    let body = json!({"queue": queue, "wait_seconds": 20});
    tokio::spawn(async move {
        let r = http
            .post(url)
            .bearer_auth(key)
            .json(&body)
            .send()
            .await
            .unwrap();
        r.json::<Value>().await.unwrap()
    })
}
