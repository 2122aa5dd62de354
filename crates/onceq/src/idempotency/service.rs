//! [`Idempotency`]: the service. One request's way through the ledger:
//! key → body → claim → handler → record (or release).

use std::{future::Future, pin::Pin, sync::Arc, task::Context, task::Poll};

use axum::{
    body::{Body, Bytes, HttpBody},
    extract::MatchedPath,
};
use http::{HeaderValue, Method, Request, Response, StatusCode, header, request::Parts};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use jiff::Timestamp;
use tower::Service;

use super::{
    AFTER_CLAIM, AFTER_HANDLER, IDEMPOTENCY_KEY,
    fingerprint::{Fingerprint, scope},
    key::{self, BadKey, IdempotencyKey},
    layer::{Config, MissingKey},
    ledger::Claim,
    record::{record, release},
    response::{self, refusal, retry_later},
};

pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A body the layer reads or hands on (the request's, the inner service's
/// answer's): bytes, sendable, with errors that box. Named once for the
/// private steps below; the public `Service` impl spells the bounds out, as
/// a public bound must.
pub(crate) trait LayerBody:
    HttpBody<Data = Bytes, Error = Self::Failure> + Send + 'static
{
    type Failure: Into<BoxError>;
}

impl<B> LayerBody for B
where
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Failure = B::Error;
}

/// Seconds a client waits before retrying after the ledger failed.
const LEDGER_RETRY_AFTER_SECS: u64 = 1;

/// Guards a service with the request ledger. Made by
/// [`IdempotencyLayer`](super::IdempotencyLayer).
#[derive(Clone)]
pub struct Idempotency<S> {
    inner: S,
    config: Arc<Config>,
}

impl<S: std::fmt::Debug> std::fmt::Debug for Idempotency<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Idempotency")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl<S> Idempotency<S> {
    pub(crate) fn new(inner: S, config: Arc<Config>) -> Self {
        Self { inner, config }
    }
}

impl<S, B, ResBody> Service<Request<B>> for Idempotency<S>
where
    S: Service<Request<Body>, Response = Response<ResBody>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
    ResBody: HttpBody<Data = Bytes> + Send + 'static,
    ResBody::Error: Into<BoxError>,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        // The ready service goes into the future (it is called after the
        // ledger answers); a fresh clone stays for the next poll_ready.
        let clone = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, clone);
        Box::pin(handle(self.config.clone(), inner, req))
    }
}

/// Methods that are idempotent by definition pass straight through: a key
/// on a GET would only cost a ledger round trip.
fn is_safe(m: &Method) -> bool {
    matches!(
        *m,
        Method::GET | Method::HEAD | Method::OPTIONS | Method::TRACE
    )
}

async fn pass_through<S, ResBody: LayerBody>(
    mut inner: S,
    req: Request<Body>,
) -> Result<Response<Body>, S::Error>
where
    S: Service<Request<Body>, Response = Response<ResBody>>,
{
    Ok(inner.call(req).await?.map(Body::new))
}

async fn handle<S, B: LayerBody, ResBody: LayerBody>(
    config: Arc<Config>,
    inner: S,
    req: Request<B>,
) -> Result<Response<Body>, S::Error>
where
    S: Service<Request<Body>, Response = Response<ResBody>>,
{
    if is_safe(req.method()) {
        return pass_through(inner, req.map(Body::new)).await;
    }
    let (parts, body) = req.into_parts();
    let (key, generated) = match key::from_headers(&parts.headers) {
        Ok(Some(k)) => (k, false),
        Ok(None) => match config.missing_key {
            MissingKey::Refuse => {
                return Ok(refusal(
                    StatusCode::BAD_REQUEST,
                    "IDEMPOTENCY_KEY_REQUIRED",
                    "this route requires an Idempotency-Key header",
                ));
            }
            MissingKey::Generate => (uuid::Uuid::now_v7().to_string(), true),
            MissingKey::PassThrough => {
                return pass_through(inner, Request::from_parts(parts, Body::new(body))).await;
            }
        },
        Err(bad) => {
            let message = match bad {
                BadKey::Repeated => "send exactly one Idempotency-Key header",
                BadKey::Malformed => "Idempotency-Key must be 1 to 255 visible ASCII characters",
            };
            return Ok(refusal(
                StatusCode::BAD_REQUEST,
                "IDEMPOTENCY_KEY_INVALID",
                message,
            ));
        }
    };
    let mut res = guarded(&config, inner, parts, body, key.clone()).await?;
    if generated {
        // Visible ASCII by construction (a UUID).
        if let Ok(v) = HeaderValue::from_str(&key) {
            res.headers_mut().insert(IDEMPOTENCY_KEY, v);
        }
    }
    Ok(res)
}

/// Everything after the key is known: the part that touches the ledger.
async fn guarded<S, B: LayerBody, ResBody: LayerBody>(
    config: &Config,
    mut inner: S,
    mut parts: Parts,
    body: B,
    key: String,
) -> Result<Response<Body>, S::Error>
where
    S: Service<Request<Body>, Response = Response<ResBody>>,
{
    let body = match read_body(&parts, body, config.max_body).await {
        Ok(b) => b,
        Err(refused) => return Ok(refused),
    };
    // The route template (`/orders/{id}`) when routed by axum, so that a key
    // means one thing per route, not per URL spelling.
    let route = match parts.extensions.get::<MatchedPath>() {
        Some(m) => m.as_str().to_owned(),
        None => parts.uri.path().to_owned(),
    };
    let principal = (config.principal)(&parts).unwrap_or_else(|| "anonymous".to_owned());
    let now = config.clock.now();
    let claim = Claim {
        scope: scope(&principal, &parts.method, &route),
        key: key.clone(),
        fingerprint: Fingerprint::of_request(&parts.method, &route, &parts.headers, &body),
        token: uuid::Uuid::new_v4().to_string(),
        locked_until: now.saturating_add(config.lease).unwrap_or(Timestamp::MAX),
        expires_at: now
            .saturating_add(config.retention.max(config.lease))
            .unwrap_or(Timestamp::MAX),
    };
    match config.ledger.claim(&claim, now).await {
        Ok(outcome) => {
            if let Some(answer) = response::for_outcome(outcome, config.mismatch_status, now) {
                return Ok(answer);
            }
        }
        Err(e) => {
            // Hole 2: a failing database is not "in flight". Nothing was
            // claimed, so the retry is safe.
            tracing::error!(error = %e, key = %claim.key, "idempotency claim failed");
            return Ok(retry_later(
                StatusCode::SERVICE_UNAVAILABLE,
                "LEDGER_UNAVAILABLE",
                "the request ledger is unavailable; retry later",
                LEDGER_RETRY_AFTER_SECS,
            ));
        }
    }
    // From here on the claim is held. If this future is dropped (client
    // gone, process killed) nothing releases it: the lease does (hole 3).
    if let Err(crash) = config.fail_points.check(AFTER_CLAIM) {
        return Ok(crashed(crash));
    }
    parts.extensions.insert(IdempotencyKey(key));
    let res = match inner
        .call(Request::from_parts(parts, Body::from(body)))
        .await
    {
        Ok(res) => res,
        Err(e) => {
            release(config, &claim, "the service failed").await;
            return Err(e);
        }
    };
    if let Err(crash) = config.fail_points.check(AFTER_HANDLER) {
        return Ok(crashed(crash));
    }
    Ok(record(config, &claim, res).await)
}

/// Buffers the request body (it is fingerprinted, then handed on), or the
/// refusal to send instead.
async fn read_body<B: LayerBody>(
    parts: &Parts,
    body: B,
    max: usize,
) -> Result<Bytes, Response<Body>> {
    let too_large = || {
        refusal(
            StatusCode::PAYLOAD_TOO_LARGE,
            "PAYLOAD_TOO_LARGE",
            &format!("the request body is over {max} bytes"),
        )
    };
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return Err(too_large());
    }
    match Limited::new(body, max).collect().await {
        Ok(c) => Ok(c.to_bytes()),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => Err(too_large()),
        Err(e) => {
            tracing::debug!(error = %e, "request body could not be read");
            Err(refusal(
                StatusCode::BAD_REQUEST,
                "BODY_UNREADABLE",
                "the request body could not be read",
            ))
        }
    }
}

/// What a client sees when a fail point fires: a failed request, and
/// nothing done to the ledger, as if the process had died there.
fn crashed(c: crate::failpoint::Crashed) -> Response<Body> {
    refusal(
        StatusCode::INTERNAL_SERVER_ERROR,
        "INTERNAL",
        &c.to_string(),
    )
}
