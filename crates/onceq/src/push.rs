//! Receiving push deliveries: check that a POST to your webhook came from
//! your onceq server, unaltered and recent.
//!
//! A delivery carries `Onceq-Timestamp` (seconds since the Unix epoch) and
//! `Onceq-Signature: v1=<hex>`, the HMAC-SHA256 of
//! `<timestamp> + "." + <raw body>` keyed with the subscription's secret
//! (`docs/api.md`, "Push subscriptions"). Verify the *raw* body bytes, before
//! parsing them; answer 2xx only once the work is done (or safely queued):
//! anything else makes the server deliver again.
//!
//! ```
//! use onceq::push::{verify_request, PushDelivery, DEFAULT_TOLERANCE};
//!
//! async fn webhook(headers: http::HeaderMap, body: bytes::Bytes) -> http::StatusCode {
//!     let secret = "whsec_..."; // from the push_subscribe answer
//!     if verify_request(secret, &headers, &body, jiff::Timestamp::now(), DEFAULT_TOLERANCE).is_err() {
//!         return http::StatusCode::UNAUTHORIZED;
//!     }
//!     let delivery: PushDelivery = match serde_json::from_slice(&body) {
//!         Ok(d) => d,
//!         Err(_) => return http::StatusCode::BAD_REQUEST,
//!     };
//!     // ... do the work, idempotently: a delivery may come more than once
//!     // (same message_id, higher delivery_count).
//!     let _ = delivery.message_id;
//!     http::StatusCode::NO_CONTENT
//! }
//! ```
//!
//! Account webhook deliveries (`docs/api.md`, "Account webhooks") are
//! signed the same way with the webhook's secret: check them with the same
//! [`verify_request`], then parse the body as an
//! [`onceq_types::webhook::WebhookEvent`] and drop repeats by its `id`.

use std::time::Duration;

use hmac::{Hmac, Mac};
use sha2::Sha256;

pub use onceq_types::push::{
    HEADER_DELIVERY_COUNT, HEADER_MESSAGE_ID, HEADER_SIGNATURE, HEADER_SUBSCRIPTION_ID,
    HEADER_TIMESTAMP, PushDelivery, SIGNATURE_SCHEME,
};

/// How far a delivery's timestamp may be from the receiver's clock: 5
/// minutes, either way. Older deliveries are refused (a captured request
/// cannot be replayed later); retries are signed anew, so a legitimate
/// delivery is never older than its own request.
pub const DEFAULT_TOLERANCE: Duration = Duration::from_secs(300);

/// Why a delivery is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SignatureError {
    /// A header the check needs is absent or not text.
    #[error("the {0} header is missing")]
    MissingHeader(&'static str),
    /// `Onceq-Timestamp` is not a whole number of seconds.
    #[error("the Onceq-Timestamp header is not a number of seconds")]
    MalformedTimestamp,
    /// `Onceq-Signature` holds no `v1=<hex>` entry.
    #[error("the Onceq-Signature header holds no v1 signature")]
    MalformedSignature,
    /// No signature matches the body, timestamp and secret.
    #[error("the signature does not match")]
    Mismatch,
    /// Authentic, but signed further from `now` than the tolerance.
    #[error("the delivery was signed too long ago (or in the future)")]
    Expired,
}

/// Checks one delivery, given its two headers' values and its raw body.
///
/// The signature header may list several comma-separated entries; one
/// matching `v1` entry suffices (room for signing with two secrets while one
/// is being replaced). The comparison is constant-time. The timestamp is
/// checked after the signature, so [`SignatureError::Expired`] only ever
/// describes an authentic delivery.
pub fn verify_signature(
    secret: &str,
    timestamp_header: &str,
    signature_header: &str,
    body: &[u8],
    now: jiff::Timestamp,
    tolerance: Duration,
) -> Result<(), SignatureError> {
    let timestamp = timestamp_header.trim();
    let seconds: i64 = timestamp
        .parse()
        .map_err(|_| SignatureError::MalformedTimestamp)?;
    let candidates: Vec<Vec<u8>> = signature_header
        .split(',')
        .filter_map(|entry| {
            let (scheme, hex_digits) = entry.trim().split_once('=')?;
            (scheme == SIGNATURE_SCHEME)
                .then(|| hex::decode(hex_digits).ok())
                .flatten()
        })
        .collect();
    if candidates.is_empty() {
        return Err(SignatureError::MalformedSignature);
    }
    let mut mac =
        Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes keys of any length");
    mac.update(timestamp.as_bytes());
    mac.update(b".");
    mac.update(body);
    let authentic = candidates
        .iter()
        .any(|c| mac.clone().verify_slice(c).is_ok());
    if !authentic {
        return Err(SignatureError::Mismatch);
    }
    let age = now.as_second().abs_diff(seconds);
    if age > tolerance.as_secs() {
        return Err(SignatureError::Expired);
    }
    Ok(())
}

/// [`verify_signature`] reading the headers from a request.
pub fn verify_request(
    secret: &str,
    headers: &http::HeaderMap,
    body: &[u8],
    now: jiff::Timestamp,
    tolerance: Duration,
) -> Result<(), SignatureError> {
    let header = |name: &'static str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .ok_or(SignatureError::MissingHeader(name))
    };
    verify_signature(
        secret,
        header(HEADER_TIMESTAMP)?,
        header(HEADER_SIGNATURE)?,
        body,
        now,
        tolerance,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "whsec_test_secret_0123";
    const BODY: &[u8] = br#"{"a":1}"#;
    // printf '%s' '1700000000.{"a":1}' | openssl dgst -sha256 -hmac whsec_test_secret_0123
    const SIG: &str = "v1=b1e06771f9a20c020fc4b9be257996790d615bbe4d030159b6a5669fdada024c";

    fn at(seconds: i64) -> jiff::Timestamp {
        jiff::Timestamp::from_second(seconds).unwrap()
    }

    fn check(
        secret: &str,
        ts: &str,
        sig: &str,
        body: &[u8],
        now: i64,
    ) -> Result<(), SignatureError> {
        verify_signature(secret, ts, sig, body, at(now), DEFAULT_TOLERANCE)
    }

    #[test]
    fn accepts_an_authentic_recent_delivery() {
        assert_eq!(
            check(SECRET, "1700000000", SIG, BODY, 1_700_000_000),
            Ok(())
        );
        // Within the tolerance, either way.
        assert_eq!(
            check(SECRET, "1700000000", SIG, BODY, 1_700_000_300),
            Ok(())
        );
        assert_eq!(
            check(SECRET, "1700000000", SIG, BODY, 1_699_999_700),
            Ok(())
        );
        // One matching entry among several.
        let several = format!("v1=00, v0=abc, {SIG}");
        assert_eq!(
            check(SECRET, "1700000000", &several, BODY, 1_700_000_000),
            Ok(())
        );
    }

    #[test]
    fn refuses_what_was_altered() {
        let now = 1_700_000_000;
        assert_eq!(
            check("whsec_other_secret_0123", "1700000000", SIG, BODY, now),
            Err(SignatureError::Mismatch)
        );
        assert_eq!(
            check(SECRET, "1700000000", SIG, br#"{"a":2}"#, now),
            Err(SignatureError::Mismatch)
        );
        assert_eq!(
            check(SECRET, "1700000001", SIG, BODY, now),
            Err(SignatureError::Mismatch)
        );
        let flipped = SIG.replace("b1e0", "b1e1");
        assert_eq!(
            check(SECRET, "1700000000", &flipped, BODY, now),
            Err(SignatureError::Mismatch)
        );
    }

    #[test]
    fn refuses_old_and_malformed_deliveries() {
        assert_eq!(
            check(SECRET, "1700000000", SIG, BODY, 1_700_000_301),
            Err(SignatureError::Expired)
        );
        assert_eq!(
            check(SECRET, "1700000000", SIG, BODY, 1_699_999_699),
            Err(SignatureError::Expired)
        );
        assert_eq!(
            check(SECRET, "soon", SIG, BODY, 0),
            Err(SignatureError::MalformedTimestamp)
        );
        for sig in ["", "b1e0", "v1=zz", "v2=b1e0", "v1"] {
            assert_eq!(
                check(SECRET, "1700000000", sig, BODY, 1_700_000_000),
                Err(SignatureError::MalformedSignature),
                "{sig:?}"
            );
        }
    }

    #[test]
    fn reads_the_headers_of_a_request() {
        let mut headers = http::HeaderMap::new();
        let now = at(1_700_000_000);
        assert_eq!(
            verify_request(SECRET, &headers, BODY, now, DEFAULT_TOLERANCE),
            Err(SignatureError::MissingHeader(HEADER_TIMESTAMP))
        );
        headers.insert("Onceq-Timestamp", "1700000000".parse().unwrap());
        assert_eq!(
            verify_request(SECRET, &headers, BODY, now, DEFAULT_TOLERANCE),
            Err(SignatureError::MissingHeader(HEADER_SIGNATURE))
        );
        headers.insert("Onceq-Signature", SIG.parse().unwrap());
        assert_eq!(
            verify_request(SECRET, &headers, BODY, now, DEFAULT_TOLERANCE),
            Ok(())
        );
    }
}
