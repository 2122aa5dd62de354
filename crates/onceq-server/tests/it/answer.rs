//! [`Res`], an answer as tests read it (status, headers, JSON body), and
//! [`in_process`], a request sent straight into a router rather than over
//! the socket (see `harness`'s module doc).

use serde_json::Value;

/// One request through `router`, as the socket client would send it: the
/// key as a Bearer header, a body as JSON.
pub async fn in_process(
    router: &axum::Router,
    method: reqwest::Method,
    path: &str,
    body: Option<Vec<u8>>,
    key: Option<&str>,
) -> Res {
    in_process_with(router, method, path, body, key, &[]).await
}

/// [`in_process`] with more request headers.
pub async fn in_process_with(
    router: &axum::Router,
    method: reqwest::Method,
    path: &str,
    body: Option<Vec<u8>>,
    key: Option<&str>,
    headers: &[(&str, &str)],
) -> Res {
    use tower::ServiceExt;
    let mut req = axum::http::Request::builder().method(method).uri(path);
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    if let Some(key) = key {
        req = req.header("authorization", format!("Bearer {key}"));
    }
    if body.is_some() {
        req = req.header("content-type", "application/json");
    }
    let req = req
        .body(axum::body::Body::from(body.unwrap_or_default()))
        .unwrap();
    let res = router.clone().oneshot(req).await.unwrap();
    let (parts, body) = res.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    Res::parse(parts.status.as_u16(), parts.headers, &bytes)
}

/// An answer: status, headers, JSON body.
pub struct Res {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
}

impl Res {
    pub async fn from(r: reqwest::Response) -> Self {
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        let bytes = r.bytes().await.unwrap();
        Self::parse(status, headers, &bytes)
    }

    fn parse(status: u16, headers: reqwest::header::HeaderMap, bytes: &[u8]) -> Self {
        let text = String::from_utf8_lossy(bytes);
        let body = serde_json::from_str(&text)
            .unwrap_or_else(|_| panic!("answer is not JSON (status {status}): {text}"));
        Self {
            status,
            headers,
            body,
        }
    }

    /// Asserts success and the envelope's shape.
    #[track_caller]
    pub fn ok(&self) -> &Self {
        assert_eq!(
            self.status, 200,
            "expected 200, got {}: {}",
            self.status, self.body
        );
        assert_eq!(self.body["ok"], true);
        assert!(self.body["error"].is_null());
        self
    }

    pub fn data(&self) -> &Value {
        &self.body["data"]
    }

    /// Asserts an error with this status and code; returns the message.
    #[track_caller]
    pub fn err(&self, status: u16, code: &str) -> String {
        assert_eq!(
            self.status, status,
            "expected {status} {code}, got: {}",
            self.body
        );
        assert_eq!(self.body["ok"], false, "{}", self.body);
        assert!(self.body["data"].is_null(), "{}", self.body);
        assert_eq!(self.body["error"]["code"], code, "{}", self.body);
        assert!(self.body["metadata"]["request_id"].is_string());
        self.body["error"]["message"].as_str().unwrap().to_owned()
    }
}
