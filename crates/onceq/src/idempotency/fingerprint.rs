//! What a request *is*, for the ledger: its [`Fingerprint`] (method, route,
//! canonical body) and its scope (caller + method + route).

use http::{HeaderMap, Method, header};
use sha2::{Digest, Sha256};

/// SHA-256 over the method, the route and the canonical body. Two requests
/// with one key and different fingerprints are a client bug (the mismatch
/// answer), not a retry.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint([u8; 32]);

impl std::fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Fingerprint({})", hex::encode(self.0))
    }
}

impl Fingerprint {
    /// The fingerprint of a request. JSON bodies (by `Content-Type`) are
    /// hashed in canonical form — parsed, object keys sorted, compact — so
    /// the same JSON with keys in another order or other whitespace is the
    /// same request (hole 5: the seed hashed `JSON.stringify` of the parsed
    /// body, which keeps key order). Other bodies, and JSON that does not
    /// parse, are hashed as raw bytes.
    ///
    /// Numbers go through `serde_json`'s `f64`/`i64`/`u64`, so two bodies
    /// that differ only in digits beyond `f64` precision (integers above
    /// `u64::MAX`, floats past 17 significant digits) count as the same.
    pub fn of_request(method: &Method, route: &str, headers: &HeaderMap, body: &[u8]) -> Self {
        let canonical = is_json(headers).then(|| canonical_json(body)).flatten();
        let (kind, body): (&[u8], &[u8]) = match &canonical {
            Some(c) => (b"json", c),
            None => (b"raw", body),
        };
        Self::of_parts_list(&[method.as_str().as_bytes(), route.as_bytes(), kind, body])
    }

    /// A fingerprint computed elsewhere (read back from a ledger, or given
    /// by a case table).
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// A fingerprint of arbitrary bytes (tests, custom ledgers).
    pub fn of_parts(bytes: &[u8]) -> Self {
        Self::of_parts_list(&[bytes])
    }

    /// Each part is length-prefixed, so no two part lists hash alike by
    /// shifting bytes from one part into the next.
    fn of_parts_list(parts: &[&[u8]]) -> Self {
        let mut h = Sha256::new();
        for p in parts {
            h.update((p.len() as u64).to_be_bytes());
            h.update(p);
        }
        Self(h.finalize().into())
    }

    /// The 32 bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

/// `application/json` or any `+json` type.
fn is_json(headers: &HeaderMap) -> bool {
    let Some(ct) = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let essence = ct
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

fn canonical_json(body: &[u8]) -> Option<Vec<u8>> {
    let mut v: serde_json::Value = serde_json::from_slice(body).ok()?;
    // Without serde_json's `preserve_order` maps are sorted already; with it
    // (another crate in the build can turn it on) they keep input order.
    v.sort_all_objects();
    serde_json::to_vec(&v).ok()
}

/// The ledger scope: a key means one thing per caller and per route (hole
/// 6: the seed's keys were global, so one caller's key replayed another's
/// answer). The principal is length-prefixed, so a principal containing
/// spaces cannot impersonate another principal + route pair.
pub fn scope(principal: &str, method: &Method, route: &str) -> String {
    format!("{}:{principal} {method} {route}", principal.len())
}

/// The default principal: who sent the `Authorization` header, as the
/// SHA-256 of its value (the ledger never stores credentials), or
/// `anonymous`.
pub fn default_principal(parts: &http::request::Parts) -> Option<String> {
    parts
        .headers
        .get(header::AUTHORIZATION)
        .map(|v| hex::encode(Sha256::digest(v.as_bytes())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json_headers() -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            header::CONTENT_TYPE,
            "application/json; charset=utf-8".parse().unwrap(),
        );
        h
    }

    #[test]
    fn json_key_order_and_whitespace_do_not_matter() {
        let h = json_headers();
        let a = Fingerprint::of_request(
            &Method::POST,
            "/x",
            &h,
            br#"{"a":1,"b":{"d":2,"c":[1,{"z":1,"y":2}]}}"#,
        );
        let b = Fingerprint::of_request(
            &Method::POST,
            "/x",
            &h,
            b"{ \"b\": {\"c\": [1, {\"y\":2,\"z\":1}], \"d\": 2}, \"a\": 1 }",
        );
        assert_eq!(a, b);
    }

    #[test]
    fn method_route_and_content_count() {
        let h = json_headers();
        let base = Fingerprint::of_request(&Method::POST, "/x", &h, br#"{"a":1}"#);
        assert_ne!(
            base,
            Fingerprint::of_request(&Method::PUT, "/x", &h, br#"{"a":1}"#)
        );
        assert_ne!(
            base,
            Fingerprint::of_request(&Method::POST, "/y", &h, br#"{"a":1}"#)
        );
        assert_ne!(
            base,
            Fingerprint::of_request(&Method::POST, "/x", &h, br#"{"a":2}"#)
        );
        // not JSON by content type: raw bytes, whitespace matters
        let raw = HeaderMap::new();
        assert_ne!(
            Fingerprint::of_request(&Method::POST, "/x", &raw, br#"{"a":1}"#),
            Fingerprint::of_request(&Method::POST, "/x", &raw, br#"{ "a":1}"#)
        );
    }

    #[test]
    fn scopes_do_not_collide_by_shifting_spaces() {
        assert_ne!(
            scope("a GET", &Method::POST, "/x"),
            scope("a", &Method::GET, "POST /x")
        );
    }
}
