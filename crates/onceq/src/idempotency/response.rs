//! What the layer answers by itself: refusals (each a JSON error body with
//! a stable code), replays of recorded answers, and which of a handler's
//! headers are worth recording.

use axum::body::Body;
use http::{HeaderMap, HeaderValue, Response, StatusCode, header};
use jiff::Timestamp;
use onceq_types::ledger::retry_after_secs;
use serde_json::json;

use super::{
    IDEMPOTENT_REPLAYED,
    ledger::{ClaimOutcome, StoredResponse},
};

/// A refusal: `{"error":{"code":…,"message":…}}`, the queue API's shape.
pub(crate) fn refusal(status: StatusCode, code: &str, message: &str) -> Response<Body> {
    let body = json!({"error": {"code": code, "message": message}}).to_string();
    let mut res = Response::new(Body::from(body));
    *res.status_mut() = status;
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    res
}

/// A refusal the client should retry after `secs`.
pub(crate) fn retry_later(
    status: StatusCode,
    code: &str,
    message: &str,
    secs: u64,
) -> Response<Body> {
    let mut res = refusal(status, code, message);
    res.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    res
}

/// What the layer answers by itself for a claim's outcome, `None` when the
/// claim is held and the handler runs. The one mapping from the ledger's
/// verdicts to HTTP (the case table's `http` expectations check it).
pub(crate) fn for_outcome(
    outcome: ClaimOutcome,
    mismatch_status: StatusCode,
    now: Timestamp,
) -> Option<Response<Body>> {
    match outcome {
        ClaimOutcome::Claimed => None,
        ClaimOutcome::Completed(stored) => Some(replay(stored)),
        ClaimOutcome::InFlight { locked_until } => Some(in_flight(locked_until, now)),
        ClaimOutcome::Mismatch => Some(refusal(
            mismatch_status,
            "IDEMPOTENCY_KEY_REUSED",
            "this Idempotency-Key was already used with a different request",
        )),
    }
}

/// 409 while another request holds the key (hole 1: the seed answered
/// `res.status(null)` and crashed). `Retry-After` is when its lease ends.
fn in_flight(locked_until: Timestamp, now: Timestamp) -> Response<Body> {
    retry_later(
        StatusCode::CONFLICT,
        "REQUEST_IN_FLIGHT",
        "a request with this Idempotency-Key is still being processed; retry later",
        retry_after_secs(locked_until, now),
    )
}

/// Headers never recorded: hop-by-hop ones (RFC 9110 §7.6.1) belong to one
/// connection, `Content-Length` and `Date` are recomputed on replay, and
/// the replay marker is the layer's own.
fn recordable(name: &header::HeaderName) -> bool {
    !matches!(
        name.as_str(),
        "connection"
            | "keep-alive"
            | "proxy-authenticate"
            | "proxy-authorization"
            | "proxy-connection"
            | "te"
            | "trailer"
            | "transfer-encoding"
            | "upgrade"
            | "content-length"
            | "date"
            | "idempotent-replayed"
    )
}

/// The headers of a handler's answer worth replaying.
pub(crate) fn recordable_headers(headers: &HeaderMap) -> HeaderMap {
    let mut out = HeaderMap::new();
    for (name, value) in headers.iter().filter(|(n, _)| recordable(n)) {
        out.append(name.clone(), value.clone());
    }
    out
}

/// A recorded answer, sent again, marked `Idempotent-Replayed: true`.
fn replay(stored: StoredResponse) -> Response<Body> {
    let mut res = Response::new(Body::from(stored.body));
    *res.status_mut() = stored.status;
    *res.headers_mut() = stored.headers;
    res.headers_mut()
        .insert(IDEMPOTENT_REPLAYED, HeaderValue::from_static("true"));
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hop_by_hop_headers_are_not_recorded() {
        let mut h = HeaderMap::new();
        h.insert("content-type", HeaderValue::from_static("application/json"));
        h.insert("location", HeaderValue::from_static("/x/1"));
        h.insert("connection", HeaderValue::from_static("close"));
        h.insert("content-length", HeaderValue::from_static("2"));
        let kept = recordable_headers(&h);
        assert_eq!(kept.len(), 2);
        assert!(kept.contains_key("location") && kept.contains_key("content-type"));
    }
}
