//! [`StoredResponse`]: an answer as the ledger keeps it, and the JSON form
//! its headers take in a database column.

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use serde_json::{Value, json};

use super::LedgerError;

/// A recorded answer: status, the headers worth replaying, body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResponse {
    /// Below 500 (server errors are never recorded).
    pub status: StatusCode,
    /// Content type and the other end-to-end headers the handler set.
    pub headers: HeaderMap,
    /// The whole body.
    pub body: Bytes,
}

impl StoredResponse {
    /// A recorded answer.
    pub fn new(status: StatusCode, headers: HeaderMap, body: Bytes) -> Self {
        Self {
            status,
            headers,
            body,
        }
    }

    /// The headers as a JSON array of `[name, value]` pairs, in order and
    /// with repeats (so `Set-Cookie` twice stays twice). A value that is not
    /// visible ASCII is stored hex-encoded as `[name, hex, "hex"]`, so
    /// nothing is lost or rewritten.
    pub fn headers_json(&self) -> String {
        let pairs: Vec<Value> = self
            .headers
            .iter()
            .map(|(n, v)| match v.to_str() {
                Ok(s) => json!([n.as_str(), s]),
                Err(_) => json!([n.as_str(), hex::encode(v.as_bytes()), "hex"]),
            })
            .collect();
        Value::Array(pairs).to_string()
    }

    /// Rebuilds an answer from its columns.
    pub fn from_columns(
        status: i64,
        headers_json: &str,
        body: Vec<u8>,
    ) -> Result<Self, LedgerError> {
        let status = u16::try_from(status)
            .ok()
            .and_then(|s| StatusCode::from_u16(s).ok())
            .ok_or_else(|| {
                LedgerError::new(format!("stored status {status} is not a status code"))
            })?;
        let pairs: Vec<Vec<String>> =
            serde_json::from_str(headers_json).map_err(LedgerError::new)?;
        let mut headers = HeaderMap::new();
        for pair in pairs {
            let (name, value) = match pair.as_slice() {
                [n, v] => (n, HeaderValue::from_str(v).map_err(LedgerError::new)?),
                [n, v, enc] if enc == "hex" => {
                    let bytes = hex::decode(v).map_err(LedgerError::new)?;
                    (
                        n,
                        HeaderValue::from_bytes(&bytes).map_err(LedgerError::new)?,
                    )
                }
                _ => return Err(LedgerError::new("stored header is not [name, value]")),
            };
            headers.append(
                HeaderName::from_bytes(name.as_bytes()).map_err(LedgerError::new)?,
                value,
            );
        }
        Ok(Self::new(status, headers, Bytes::from(body)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip_with_repeats_and_opaque_bytes() {
        let mut h = HeaderMap::new();
        h.insert("content-type", HeaderValue::from_static("application/json"));
        h.append("set-cookie", HeaderValue::from_static("a=1"));
        h.append("set-cookie", HeaderValue::from_static("b=2"));
        h.insert("x-odd", HeaderValue::from_bytes(b"caf\xe9").unwrap());
        let r = StoredResponse::new(StatusCode::ACCEPTED, h, Bytes::from_static(b"{}"));
        let back = StoredResponse::from_columns(202, &r.headers_json(), b"{}".to_vec()).unwrap();
        assert_eq!(back, r);
    }
}
