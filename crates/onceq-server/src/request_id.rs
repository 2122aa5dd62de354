//! The request id: the caller's `X-Request-Id` when it is a sane token,
//! otherwise a fresh UUID v7.
//!
//! A caller's id is echoed in the answer's `X-Request-Id` header, in the
//! envelope's `metadata.request_id` and in every log line of the request,
//! so it must be safe in all three: a header value, a JSON string and a log
//! field. Hence the narrow alphabet (no spaces, quotes or control
//! characters that could forge a log line) and the bound on its length (a
//! caller cannot make every line of its requests kilobytes long). A
//! malformed id is replaced, not refused: the id is for correlating logs,
//! and a request should not fail over it.

use axum::http::HeaderMap;

/// The header the id comes in and goes back out in.
pub const HEADER: &str = "x-request-id";

/// Longest caller-chosen id kept, in bytes.
pub const MAX_LEN: usize = 128;

/// The id of one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestId(String);

impl RequestId {
    /// The caller's id from `headers` when it is valid ([`is_valid`]),
    /// otherwise a new one.
    pub fn from_headers(headers: &HeaderMap) -> Self {
        headers
            .get(HEADER)
            .and_then(|v| v.to_str().ok())
            .filter(|s| is_valid(s))
            .map(|s| Self(s.to_owned()))
            .unwrap_or_else(Self::new)
    }

    /// A fresh id (UUID v7: sortable by time).
    pub fn new() -> Self {
        Self(uuid::Uuid::now_v7().to_string())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for RequestId {
    fn default() -> Self {
        Self::new()
    }
}

/// 1 to [`MAX_LEN`] bytes of `[A-Za-z0-9._:-]`.
pub fn is_valid(id: &str) -> bool {
    (1..=MAX_LEN).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'))
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn from(value: &[u8]) -> RequestId {
        let mut headers = HeaderMap::new();
        headers.insert(HEADER, HeaderValue::from_bytes(value).unwrap());
        RequestId::from_headers(&headers)
    }

    #[test]
    fn a_token_is_kept_and_anything_else_replaced() {
        assert_eq!(from(b"req-1.a_b:c").as_str(), "req-1.a_b:c");
        let longest = "a".repeat(MAX_LEN);
        assert_eq!(from(longest.as_bytes()).as_str(), longest);
        for bad in [
            "a".repeat(MAX_LEN + 1).as_bytes(),
            b"has space",
            b"quote\"d",
            b"",
            b"caf\xc3\xa9",
        ] {
            let id = from(bad);
            assert_ne!(id.as_bytes_for_test(), bad);
            assert!(uuid::Uuid::parse_str(id.as_str()).is_ok(), "{id:?}");
        }
    }

    impl RequestId {
        fn as_bytes_for_test(&self) -> &[u8] {
            self.0.as_bytes()
        }
    }
}
