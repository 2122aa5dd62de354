//! `X-Request-Id` over a real socket: a caller's valid id is used and
//! echoed in the header and in `metadata.request_id` (also on answers
//! refused before a handler runs); a malformed one, or none, gets a fresh
//! UUID v7.

use serde_json::json;

use crate::{
    both,
    harness::{Backend, Res, TestServer},
};

async fn send(s: &TestServer, path: &str, body: &str, id: Option<&str>) -> Res {
    let mut req = s
        .http
        .post(s.url(path))
        .bearer_auth(&s.key)
        .header("content-type", "application/json")
        .body(body.to_owned());
    if let Some(id) = id {
        req = req.header("x-request-id", id);
    }
    Res::from(req.send().await.unwrap()).await
}

fn id_of(r: &Res) -> String {
    let header = r.headers["x-request-id"].to_str().unwrap().to_owned();
    assert_eq!(r.body["metadata"]["request_id"], header.as_str());
    header
}

fn is_fresh(id: &str) {
    let uuid = uuid::Uuid::parse_str(id).unwrap_or_else(|_| panic!("not a UUID: {id:?}"));
    assert_eq!(uuid.get_version_num(), 7);
}

async fn a_valid_request_id_is_used_and_echoed(b: Backend) {
    let s = TestServer::start(b).await;
    let publish = json!({"queue": "q", "payload": {"a": 1}}).to_string();
    let r = send(&s, "/v1/queue/publish", &publish, Some("req-1.a_b:C")).await;
    r.ok();
    assert_eq!(id_of(&r), "req-1.a_b:C");
    // Refused by the body's extractor, before any handler: same id.
    let r = send(&s, "/v1/queue/publish", "{not json", Some("bad-body-7")).await;
    assert_eq!(r.status, 400);
    assert_eq!(id_of(&r), "bad-body-7");
    // An unknown route (the fallback) too.
    let r = send(&s, "/v1/nope", "{}", Some("nowhere-1")).await;
    assert_eq!(r.status, 404);
    assert_eq!(id_of(&r), "nowhere-1");
    // The longest kept.
    let longest = "x".repeat(128);
    let r = send(&s, "/v1/queue/publish", &publish, Some(&longest)).await;
    assert_eq!(id_of(&r), longest);
}
both!(a_valid_request_id_is_used_and_echoed);

async fn a_malformed_or_missing_request_id_is_replaced(b: Backend) {
    let s = TestServer::start(b).await;
    let publish = json!({"queue": "q", "payload": {"a": 1}}).to_string();
    let too_long = "x".repeat(129);
    for bad in [
        Some("has space"),
        Some("quote\"d"),
        Some("semi;colon"),
        Some("slash/ed"),
        Some(too_long.as_str()),
        Some(""),
        None,
    ] {
        let r = send(&s, "/v1/queue/publish", &publish, bad).await;
        r.ok();
        let id = id_of(&r);
        assert_ne!(Some(id.as_str()), bad);
        is_fresh(&id);
    }
}
both!(a_malformed_or_missing_request_id_is_replaced);
