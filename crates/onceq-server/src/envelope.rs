//! The answer envelope `{ok, data, error, metadata}`.
//!
//! A middleware ([`track_request`]) gives each request an id (the caller's
//! `X-Request-Id` when valid, else a UUID v7: [`request_id`]),
//! a start instant and a span ([`telemetry::http`]).
//! The id and instant are held in a task-local for the request's duration,
//! so both successful replies and errors — including errors raised by
//! extractors before a handler runs — carry `request_id` and `latency_ms`
//! without every handler threading them through. (A request extension
//! would not reach an extractor's rejection, which is built without the
//! request.)

use std::time::Instant;

use axum::{
    extract::Request,
    http::{HeaderValue, StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
};
use onceq_types::{Envelope, ErrorBody, Metadata};
use serde::Serialize;
use tracing::Instrument;

use crate::{
    request_id::{self, RequestId},
    telemetry,
};

/// Facts about the request being served.
#[derive(Clone, Debug)]
pub struct RequestMeta {
    /// The caller's `X-Request-Id`, or a UUID v7.
    pub id: String,
    /// When the server started on it.
    pub started: Instant,
}

tokio::task_local! {
    static REQUEST: RequestMeta;
}

/// Middleware: takes or makes the request id, starts the latency clock,
/// serves the request in its span, and sends the id back as
/// `x-request-id`.
pub async fn track_request(req: Request, next: Next) -> Response {
    let id = RequestId::from_headers(req.headers());
    let span = telemetry::http::request_span(&req, &id);
    let started = Instant::now();
    let meta = RequestMeta {
        id: id.as_str().to_owned(),
        started,
    };
    let mut res = REQUEST
        .scope(meta, next.run(req))
        .instrument(span.clone())
        .await;
    telemetry::http::finish(&span, res.status(), started);
    // Valid ids are header-safe by construction (`request_id::is_valid`).
    if let Ok(v) = HeaderValue::from_str(id.as_str()) {
        res.headers_mut().insert(request_id::HEADER, v);
    }
    res
}

/// The metadata of the current request (a fresh id outside a request).
pub fn metadata(cost_usd: f64, idempotent_replay: bool) -> Metadata {
    let (request_id, latency_ms) = REQUEST
        .try_with(|m| (m.id.clone(), m.started.elapsed().as_secs_f64() * 1000.0))
        .unwrap_or_else(|_| (uuid::Uuid::now_v7().to_string(), 0.0));
    Metadata {
        request_id,
        latency_ms: (latency_ms * 1000.0).round() / 1000.0,
        cost_usd,
        idempotent_replay,
    }
}

/// A successful answer: 200 and `{ok: true, data, ...}`.
pub struct Reply<T> {
    data: T,
    cost_usd: f64,
    replay: bool,
}

impl<T: Serialize> Reply<T> {
    /// A non-replay answer that cost nothing. A keyed handler answers
    /// through [`Caller::reply`](crate::caller::Caller::reply) instead,
    /// which reports its capability's per-call price.
    pub fn new(data: T) -> Self {
        Self {
            data,
            cost_usd: 0.0,
            replay: false,
        }
    }

    /// Sets what the call cost.
    pub fn cost(mut self, usd: f64) -> Self {
        self.cost_usd = usd;
        self
    }

    /// Marks the answer as an idempotent replay.
    pub fn replay(mut self, replay: bool) -> Self {
        self.replay = replay;
        self
    }
}

impl<T: Serialize> IntoResponse for Reply<T> {
    fn into_response(self) -> Response {
        let envelope = Envelope {
            ok: true,
            data: Some(self.data),
            error: None,
            metadata: metadata(self.cost_usd, self.replay),
        };
        json_response(StatusCode::OK, &envelope)
    }
}

/// An error envelope with the given status.
pub fn error_response(status: StatusCode, error: ErrorBody) -> Response {
    let envelope: Envelope<()> = Envelope {
        ok: false,
        data: None,
        error: Some(error),
        metadata: metadata(0.0, false),
    };
    json_response(status, &envelope)
}

fn json_response<T: Serialize>(status: StatusCode, body: &T) -> Response {
    match serde_json::to_vec(body) {
        Ok(bytes) => (
            status,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            bytes,
        )
            .into_response(),
        Err(e) => {
            tracing::error!(error = %e, "failed to serialise an answer");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}
