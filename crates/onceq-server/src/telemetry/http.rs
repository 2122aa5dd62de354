//! The span of each HTTP request, named and filled as OpenTelemetry's
//! `http.server` conventions say (`{method} {route}`, kind server,
//! `http.request.method`, `http.route`, `url.path`,
//! `http.response.status_code`), with the request id, and continuing the
//! caller's trace when it sent a W3C `traceparent`.

use std::time::Instant;

use axum::{
    extract::{MatchedPath, Request},
    http::StatusCode,
};
use opentelemetry_http::HeaderExtractor;
use tracing::{Span, field::Empty};
use tracing_opentelemetry::OpenTelemetrySpanExt;

use crate::request_id::RequestId;

/// The span `req` is served in. Its name and the caller's trace context are
/// only worked out when some layer records the span, so with logs above
/// INFO and no trace export it costs a disabled callsite's check.
pub fn request_span(req: &Request, id: &RequestId) -> Span {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(MatchedPath::as_str);
    let span = tracing::info_span!(
        "request",
        otel.name = Empty,
        otel.kind = "server",
        otel.status_code = Empty,
        http.request.method = %req.method(),
        http.route = route,
        url.path = req.uri().path(),
        http.response.status_code = Empty,
        request_id = id.as_str(),
    );
    if span.is_disabled() {
        return span;
    }
    // Without a route (a 404) the name is the method alone, as the
    // conventions ask: the path would make one span name per URL.
    let name = match route {
        Some(route) => format!("{} {route}", req.method()),
        None => req.method().to_string(),
    };
    span.record("otel.name", name);
    // The propagator is the no-op one unless trace export is on
    // (`traces::install`): then this reads `traceparent` (and
    // `tracestate`).
    let parent = opentelemetry::global::get_text_map_propagator(|p| {
        p.extract(&HeaderExtractor(req.headers()))
    });
    // An error here means no OpenTelemetry layer is installed (logs only):
    // nothing to continue.
    let _ = span.set_parent(parent);
    span
}

/// Records the answer's status on `span` (a 5xx marks it failed) and logs
/// the request's end at DEBUG: an access log for those who ask for one.
pub fn finish(span: &Span, status: StatusCode, started: Instant) {
    if !span.is_disabled() {
        // As i64: the OpenTelemetry bridge exports a u64 as a string.
        span.record("http.response.status_code", i64::from(status.as_u16()));
        if status.is_server_error() {
            span.record("otel.status_code", "ERROR");
        }
    }
    // Entered, not `parent:`: the JSON format lists the current span's
    // scope, not an event's explicit parent.
    span.in_scope(|| {
        tracing::debug!(
            status = status.as_u16(),
            latency_ms = started.elapsed().as_secs_f64() * 1000.0,
            "request finished"
        )
    });
}
