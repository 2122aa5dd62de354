//! The `Idempotency-Key` header: reading and checking it, and
//! [`IdempotencyKey`], the extractor a handler uses to see it.

use std::convert::Infallible;

use axum::{
    extract::{FromRequestParts, OptionalFromRequestParts},
    response::{IntoResponse, Response},
};
use http::{HeaderMap, StatusCode, request::Parts};

use super::{IDEMPOTENCY_KEY, response::refusal};

/// The request's idempotency key, put in the request extensions by the
/// layer (the client's, or the generated one). Handlers pass it downstream
/// — as the queue publish key, say — so a retry that runs the handler again
/// after a crash repeats the same downstream call, which then dedupes.
///
/// Extracting it where the layer is not installed is a server bug: 500.
/// Use `Option<IdempotencyKey>` on routes with `require_key(false)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdempotencyKey(pub String);

impl IdempotencyKey {
    /// The key.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for IdempotencyKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The rejection of [`IdempotencyKey`] when the layer is not installed.
#[derive(Debug, Clone, Copy)]
pub struct MissingIdempotencyLayer;

impl IntoResponse for MissingIdempotencyLayer {
    fn into_response(self) -> Response {
        tracing::error!("IdempotencyKey extracted on a route without IdempotencyLayer");
        refusal(
            StatusCode::INTERNAL_SERVER_ERROR,
            "INTERNAL",
            "the idempotency layer is not installed on this route",
        )
    }
}

impl<S: Send + Sync> FromRequestParts<S> for IdempotencyKey {
    type Rejection = MissingIdempotencyLayer;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<Self>()
            .cloned()
            .ok_or(MissingIdempotencyLayer)
    }
}

impl<S: Send + Sync> OptionalFromRequestParts<S> for IdempotencyKey {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Option<Self>, Self::Rejection> {
        Ok(parts.extensions.get::<Self>().cloned())
    }
}

/// Longest key accepted (the seed's and the queue's limit).
pub const MAX_KEY_LEN: usize = 255;

/// Why a request's key header is unusable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BadKey {
    /// The header appears more than once.
    Repeated,
    /// Empty, too long, or not visible ASCII.
    Malformed,
}

/// The key the client sent, if any: 1..=255 visible ASCII characters.
pub(crate) fn from_headers(headers: &HeaderMap) -> Result<Option<String>, BadKey> {
    let mut values = headers.get_all(&IDEMPOTENCY_KEY).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(BadKey::Repeated);
    }
    let bytes = value.as_bytes();
    let visible = bytes.iter().all(|b| (0x21..=0x7e).contains(b));
    if bytes.is_empty() || bytes.len() > MAX_KEY_LEN || !visible {
        return Err(BadKey::Malformed);
    }
    // Visible ASCII is UTF-8.
    Ok(Some(String::from_utf8_lossy(bytes).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(values: &[&[u8]]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(&IDEMPOTENCY_KEY, http::HeaderValue::from_bytes(v).unwrap());
        }
        h
    }

    #[test]
    fn keys_are_one_to_255_visible_ascii() {
        assert_eq!(from_headers(&HeaderMap::new()), Ok(None));
        assert_eq!(
            from_headers(&with(&[b"exp_2026-07-26"])),
            Ok(Some("exp_2026-07-26".into()))
        );
        assert_eq!(
            from_headers(&with(&[&[b'k'; 255]])).map(|k| k.map(|k| k.len())),
            Ok(Some(255))
        );
        assert_eq!(from_headers(&with(&[&[b'k'; 256]])), Err(BadKey::Malformed));
        assert_eq!(from_headers(&with(&[b""])), Err(BadKey::Malformed));
        assert_eq!(from_headers(&with(&[b"a b"])), Err(BadKey::Malformed));
        assert_eq!(from_headers(&with(&[b"caf\xe9"])), Err(BadKey::Malformed));
        assert_eq!(from_headers(&with(&[b"a", b"b"])), Err(BadKey::Repeated));
    }
}
