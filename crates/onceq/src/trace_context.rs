//! W3C trace context across the queue, with the `otel` feature:
//!
//! - each request the [`Client`](crate::Client) sends carries the current
//!   span's context as `traceparent` (and `tracestate`) HTTP headers, so
//!   the server's span of it joins the caller's trace;
//! - a publish also stores it in the *message's* headers (queue-api-2.md
//!   §3), unless the caller set `traceparent` there itself;
//! - the worker processes a message in a span whose parent is the
//!   message's `traceparent`: one trace from the publisher's request to the
//!   worker's handler.
//!
//! The context is the one `tracing-opentelemetry` keeps on the current
//! `tracing` span, written and read by the global propagator the
//! application installs (`opentelemetry::global::set_text_map_propagator`,
//! usually `TraceContextPropagator`). Without a propagator, or outside any
//! traced span, nothing is added. Without the feature these are no-ops and
//! the OpenTelemetry crates are not built.

use onceq_types::Headers;
use reqwest::header::HeaderMap;

#[cfg(feature = "otel")]
mod otel {
    use onceq_types::Headers;
    #[cfg(feature = "postgres")]
    use opentelemetry::propagation::Extractor;
    use opentelemetry::propagation::Injector;

    /// A message's headers as the propagator reads and writes them.
    pub(super) struct MessageHeaders<'a>(pub &'a mut Headers);

    impl Injector for MessageHeaders<'_> {
        fn set(&mut self, key: &str, value: String) {
            // Names are stored lower-case; the propagator's already are.
            self.0.insert(key.to_ascii_lowercase(), value);
        }
    }

    /// Read-only view for extraction (the worker's, which needs
    /// `postgres`).
    #[cfg(feature = "postgres")]
    pub(super) struct Read<'a>(pub &'a Headers);

    #[cfg(feature = "postgres")]
    impl Extractor for Read<'_> {
        fn get(&self, key: &str) -> Option<&str> {
            self.0.get(key).map(String::as_str)
        }

        fn keys(&self) -> Vec<&str> {
            self.0.keys().map(String::as_str).collect()
        }
    }
}

/// Adds the current span's trace context to a request's `headers`.
#[cfg(feature = "otel")]
pub(crate) fn inject(headers: &mut HeaderMap) {
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    let cx = tracing::Span::current().context();
    opentelemetry::global::get_text_map_propagator(|p| {
        p.inject_context(&cx, &mut opentelemetry_http::HeaderInjector(headers))
    });
}

/// Adds the current span's trace context to a message's `headers`, unless
/// they carry a `traceparent` already (the caller's choice wins).
#[cfg(feature = "otel")]
pub(crate) fn inject_message(headers: &mut Headers) {
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    if headers.contains_key("traceparent") {
        return;
    }
    let cx = tracing::Span::current().context();
    opentelemetry::global::get_text_map_propagator(|p| {
        p.inject_context(&cx, &mut otel::MessageHeaders(headers))
    });
}

/// Makes the trace context of a message's `headers` the parent of `span`.
#[cfg(all(feature = "otel", feature = "postgres"))]
pub(crate) fn adopt(span: &tracing::Span, headers: &Headers) {
    use opentelemetry::trace::TraceContextExt;
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    if span.is_disabled() || !headers.contains_key("traceparent") {
        return;
    }
    let cx = opentelemetry::global::get_text_map_propagator(|p| p.extract(&otel::Read(headers)));
    if cx.span().span_context().is_valid() {
        // An error means no OpenTelemetry layer records the span.
        let _ = span.set_parent(cx);
    }
}

/// Without the `otel` feature: nothing to add.
#[cfg(not(feature = "otel"))]
pub(crate) fn inject(_headers: &mut HeaderMap) {}

/// Without the `otel` feature: nothing to add.
#[cfg(not(feature = "otel"))]
pub(crate) fn inject_message(_headers: &mut Headers) {}

/// Without the `otel` feature: no parent to set. (Only the worker, which
/// needs `postgres`, calls it.)
#[cfg(all(not(feature = "otel"), feature = "postgres"))]
pub(crate) fn adopt(_span: &tracing::Span, _headers: &Headers) {}
