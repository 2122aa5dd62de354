//! The dashboard's webhook pages: the project's webhooks and one
//! webhook's deliveries, each paged ([`PAGE`] rows) with a live region
//! whose unchanged poll answers no body (204 to htmx, 304 to anyone
//! else), escaped, never the secret, and only for a key that sees every
//! queue (as the API's list).

use reqwest::{StatusCode, header};
use serde_json::json;

use crate::both;
use crate::dashboard::Browser;
use crate::harness::{Backend, TestServer};
use crate::push::receiver::Receiver;
use crate::webhooks::{SECRET, register};

both!(webhooks_and_deliveries_are_paged_escaped_and_polled);

/// The dashboard's page size (`onceq_server::dashboard::paging::PAGE_SIZE`).
const PAGE: usize = onceq_server::dashboard::paging::PAGE_SIZE;

async fn webhooks_and_deliveries_are_paged_escaped_and_polled(b: Backend) {
    let s = TestServer::start_with(b, crate::push::config()).await;
    let me = Browser::signed_in(&s, &s.key);
    let empty = me.get("/dashboard/webhooks").await;
    assert_eq!(empty.status, StatusCode::OK);
    empty.has("No webhooks.");

    let rx = Receiver::answering(204).await;
    let hook = s
        .post(
            "/v1/account/webhooks/register",
            json!({"url": rx.url("/in"), "events": ["webhook.test"], "secret": SECRET,
                   "description": "<script>alert(1)</script>"}),
        )
        .await;
    hook.ok();
    let id = hook.data()["id"].as_str().unwrap().to_owned();
    register(&s, &rx.url("/other"), json!(["*"])).await;

    let list = me.get("/dashboard/webhooks").await;
    assert_eq!(list.status, StatusCode::OK);
    list.has(&format!(r#"id="webhook-{id}""#))
        .has(&format!(r#"href="/dashboard/webhooks/{id}""#))
        .has("&lt;script&gt;alert(1)&lt;/script&gt;")
        .lacks("<script>alert(1)")
        .lacks(SECRET)
        .has(r#"hx-get="/dashboard/webhooks/live" hx-trigger="every 3s""#)
        .has(r#"href="/dashboard/webhooks">Webhooks</a>"#);
    assert_eq!(list.body.matches("<tr id=\"webhook-").count(), 2);

    // One page and one delivery more.
    for _ in 0..=PAGE {
        s.post(&format!("/v1/account/webhooks/test/{id}"), json!({}))
            .await
            .ok();
    }
    let path = format!("/dashboard/webhooks/{id}");
    let first = me.get(&path).await;
    assert_eq!(first.status, StatusCode::OK);
    assert_eq!(first.body.matches(r#"<tr class="delivery">"#).count(), PAGE);
    first
        .has(&format!(
            r#"rel="next" href="/dashboard/webhooks/{id}?page=2""#
        ))
        .has(&format!("Deliveries 1–{PAGE} of {}", PAGE + 1))
        .has("delivered")
        .lacks(SECRET);
    let second = me.get(&format!("{path}?page=2")).await;
    assert_eq!(second.body.matches(r#"<tr class="delivery">"#).count(), 1);
    second
        .has(&format!(r#"href="/dashboard/webhooks/{id}">← First page"#))
        .lacks(r#"rel="next""#)
        .has(&format!(r#"hx-get="/dashboard/webhooks/{id}/live?page=2""#));

    // The live region of page 2: unchanged, no body; changed, the rows.
    let live_path = format!("{path}/live?page=2");
    let live = me.get_htmx(&live_path).await;
    assert_eq!(live.status, StatusCode::OK);
    live.lacks("<html");
    let etag = live.headers[header::ETAG].to_str().unwrap().to_owned();
    assert!(second.body.contains(etag.trim_matches('"')));
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
    assert_eq!(poll(false).await.status, StatusCode::NOT_MODIFIED);
    s.post(&format!("/v1/account/webhooks/test/{id}"), json!({}))
        .await
        .ok();
    let changed = poll(true).await;
    assert_eq!(changed.status, StatusCode::OK);
    assert_eq!(changed.body.matches(r#"<tr class="delivery">"#).count(), 2);
    assert_ne!(changed.headers[header::ETAG].to_str().unwrap(), etag);

    // The list's live region answers the same way.
    let list_live = me.get_htmx("/dashboard/webhooks/live").await;
    let tag = list_live.headers[header::ETAG].to_str().unwrap().to_owned();
    let again = me
        .send(
            me.http
                .get(s.url("/dashboard/webhooks/live"))
                .header(header::IF_NONE_MATCH, &tag)
                .header("hx-request", "true"),
        )
        .await;
    assert_eq!(again.status, StatusCode::NO_CONTENT);

    // Refusals: bad page, unknown webhook, another project's, a scoped key.
    let bad = me.get(&format!("{path}?page=0")).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    bad.has("page must be a whole number from 1");
    assert_eq!(
        me.get("/dashboard/webhooks/whk_nope").await.status,
        StatusCode::NOT_FOUND
    );
    let other = Browser::signed_in(&s, &s.other_key);
    assert_eq!(other.get(&path).await.status, StatusCode::NOT_FOUND);
    let scoped = s.scoped_key("alpha", "read", "a-*").await;
    let narrow = Browser::signed_in(&s, &scoped);
    let refused = narrow.get("/dashboard/webhooks").await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    refused.lacks(&id);
    assert_eq!(narrow.get(&path).await.status, StatusCode::FORBIDDEN);
}
