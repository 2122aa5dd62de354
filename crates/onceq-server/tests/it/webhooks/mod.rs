//! Account webhooks over real HTTP, on both backends: the calls and their
//! refusals (`api`), events delivered to a local receiver (signed, retried
//! after a failure with the same event id, listed in `deliveries`, `test`
//! sent at once, queue events, the SSRF guard at each attempt: `delivery`),
//! the events of nacks, lease expiry, failed pushes and credit (`events`),
//! nothing paid
//! without webhooks (`lean`), a restart mid-attempt (`restart`), and two
//! servers on one PostgreSQL database delivering each event once
//! (`two_servers`).

mod api;
mod delivery;
mod events;
mod lean;
mod restart;
mod two_servers;

use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::TestServer;
use crate::push::receiver::Seen;

/// The secret the tests register with.
pub const SECRET: &str = "hook-secret-0123456789";

/// Registers `url` for `events` (project alpha) with [`SECRET`]; the data.
pub async fn register(s: &TestServer, url: &str, events: Value) -> Value {
    let r = s
        .post(
            "/v1/account/webhooks/register",
            json!({"url": url, "events": events, "secret": SECRET}),
        )
        .await;
    r.ok();
    r.data().clone()
}

/// Polls `deliveries/{id}` (every 10 ms, 30 s at most) until `done` holds
/// for its items.
pub async fn attempts_until(
    s: &TestServer,
    id: &str,
    done: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let r = s
            .get(&format!("/v1/account/webhooks/deliveries/{id}"))
            .await;
        r.ok();
        let items = r.data()["items"].as_array().unwrap().clone();
        if done(&items) {
            return items;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "attempts of {id} never got there: {items:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Asserts `seen` is a delivery of an event of `kind` to webhook `id`,
/// signed with [`SECRET`] at its own timestamp; returns the body.
pub fn assert_event(seen: &Seen, id: &str, kind: &str) -> Value {
    let body = seen.json();
    assert_eq!(body["type"], kind, "{body}");
    assert_eq!(body["project"], "alpha");
    assert!(body["id"].as_str().unwrap().starts_with("evt_"));
    assert_eq!(seen.header("onceq-event-id"), body["id"].as_str().unwrap());
    assert_eq!(seen.header("onceq-event-type"), kind);
    assert_eq!(seen.header("onceq-webhook-id"), id);
    assert_eq!(seen.header("content-type"), "application/json");
    let at = jiff::Timestamp::from_second(seen.header("onceq-timestamp").parse().unwrap()).unwrap();
    onceq::push::verify_request(
        SECRET,
        &seen.headers,
        &seen.body,
        at,
        onceq::push::DEFAULT_TOLERANCE,
    )
    .expect("the signature verifies");
    assert_eq!(
        onceq::push::verify_request(
            "another-secret-0123456",
            &seen.headers,
            &seen.body,
            at,
            onceq::push::DEFAULT_TOLERANCE
        ),
        Err(onceq::push::SignatureError::Mismatch)
    );
    body
}
