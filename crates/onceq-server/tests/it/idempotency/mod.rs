//! `Idempotency-Key` on every mutating call (queue-api-2.md §4), over HTTP
//! on both stores: per endpoint a replay (same answer, `idempotent_replay`,
//! nothing done again), a reuse with another body (422) and a retry while
//! the first call still holds the key (409 + `Retry-After`, made
//! deterministic by claiming the key in the store as another server would,
//! then taken over once that claim's lease ends on the test's clock).
//! `rules`: what holds for every route (scope, refusals released, bad
//! keys, no charge). `batch`: publish_batch's header key. `concurrent`:
//! racing calls and two servers on one database. `admin`: the admin API's
//! calls that honour the key, and the two that do not. `later`: cancel,
//! pause/resume, cron and webhooks. `cases`: the shared case table through
//! the store and the server's HTTP mapping.

mod admin;
mod batch;
mod cases;
mod concurrent;
mod endpoints;
mod later;
mod rules;
mod scope;

use jiff::SignedDuration;
use onceq::idempotency::Fingerprint;
use onceq_store::{LedgerClaim, LedgerKey};
use reqwest::Method;
use serde_json::Value;

use crate::harness::{Res, TestServer};

/// Who calls: an API key and its project.
#[derive(Clone, Copy)]
pub struct Who<'a> {
    pub key: &'a str,
    pub project: &'a str,
}

/// The harness's project-alpha key.
pub fn alpha(s: &TestServer) -> Who<'_> {
    Who {
        key: &s.key,
        project: "alpha",
    }
}

/// A call with `Idempotency-Key: key`.
pub async fn call(
    s: &TestServer,
    method: Method,
    path: &str,
    body: Option<Value>,
    key: &str,
) -> Res {
    call_as(s, alpha(s), method, path, body, key).await
}

/// [`call`] as `who`.
pub async fn call_as(
    s: &TestServer,
    who: Who<'_>,
    method: Method,
    path: &str,
    body: Option<Value>,
    key: &str,
) -> Res {
    s.send_as_with(who.key, method, path, body, &[("idempotency-key", key)])
        .await
}

/// The call with key `K`, its replay and the same key with `other` (a
/// different path or body): 200, the same data with `idempotent_replay`,
/// 422. Returns the first answer's data.
pub async fn replays(
    s: &TestServer,
    method: Method,
    path: &str,
    body: Option<Value>,
    other: (&str, Option<Value>),
) -> Value {
    replays_as(s, alpha(s), method, path, body, other).await
}

/// [`replays`] as `who`.
pub async fn replays_as(
    s: &TestServer,
    who: Who<'_>,
    method: Method,
    path: &str,
    body: Option<Value>,
    other: (&str, Option<Value>),
) -> Value {
    let call = |method, path, body, key| call_as(s, who, method, path, body, key);
    let first = call(method.clone(), path, body.clone(), "K").await;
    first.ok();
    assert_eq!(
        first.body["metadata"]["idempotent_replay"], false,
        "{}",
        first.body
    );
    let again = call(method.clone(), path, body, "K").await;
    again.ok();
    assert_eq!(
        again.data(),
        first.data(),
        "a replay answers what the first answered"
    );
    assert_eq!(
        again.body["metadata"]["idempotent_replay"], true,
        "{}",
        again.body
    );
    assert_eq!(again.body["metadata"]["cost_usd"], 0.0);
    assert_eq!(
        again
            .headers
            .get("idempotent-replayed")
            .map(|v| v.to_str().unwrap()),
        Some("true")
    );
    assert!(first.headers.get("idempotent-replayed").is_none());
    assert_ne!(
        again.body["metadata"]["request_id"], first.body["metadata"]["request_id"],
        "a replay has a request id of its own"
    );
    let (other_path, other_body) = other;
    let reused = call(method, other_path, other_body, "K").await;
    let message = reused.err(422, "IDEMPOTENCY_KEY_REUSED");
    assert!(message.contains("Idempotency-Key"), "{message}");
    assert!(reused.body["error"]["hint"].is_string());
    first.data().clone()
}

/// While another server holds the key of this very call, a retry is 409
/// `REQUEST_IN_FLIGHT` with `Retry-After` (until that claim's lease ends);
/// once it has ended (that server died), the retry takes the claim over
/// and runs. Returns the answer of the run.
pub async fn in_flight(
    s: &TestServer,
    capability: &str,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> Res {
    in_flight_as(s, alpha(s), capability, method, path, body).await
}

/// [`in_flight`] as `who`.
pub async fn in_flight_as(
    s: &TestServer,
    who: Who<'_>,
    capability: &str,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> Res {
    let mut headers = axum::http::HeaderMap::new();
    let bytes = match &body {
        Some(b) => {
            headers.insert("content-type", "application/json".parse().unwrap());
            serde_json::to_vec(b).unwrap()
        }
        None => Vec::new(),
    };
    let http_method = axum::http::Method::from_bytes(method.as_str().as_bytes()).unwrap();
    let fingerprint = Fingerprint::of_request(&http_method, path, &headers, &bytes);
    let now = s.clock.now();
    let held = onceq_server::idempotency::CLAIM_LEASE;
    let outcome = s
        .state
        .store()
        .ledger_claim(LedgerClaim {
            key: LedgerKey {
                project: who.project.to_owned(),
                capability: capability.to_owned(),
                key: "held".to_owned(),
            },
            fingerprint: *fingerprint.as_bytes(),
            token: "another-server".to_owned(),
            locked_until: now + held,
            expires_at: now + SignedDuration::from_hours(24),
            now,
        })
        .await
        .unwrap();
    assert_eq!(outcome, onceq_store::LedgerClaimOutcome::Claimed);
    let r = call_as(s, who, method.clone(), path, body.clone(), "held").await;
    r.err(409, "REQUEST_IN_FLIGHT");
    assert_eq!(r.body["error"]["retryable"], true);
    assert_eq!(
        r.headers.get("retry-after").map(|v| v.to_str().unwrap()),
        Some(held.as_secs().to_string().as_str())
    );
    s.clock.advance(held);
    let r = call_as(s, who, method, path, body, "held").await;
    r.ok();
    assert_eq!(r.body["metadata"]["idempotent_replay"], false);
    r
}
