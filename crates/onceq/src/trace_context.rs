//! W3C trace context across the queue, with the `otel` feature: each
//! request the [`Client`](crate::Client) sends carries the current span's
//! context as `traceparent` (and `tracestate`), so the server's span of it
//! joins the caller's trace.
//!
//! The context is the one `tracing-opentelemetry` keeps on the current
//! `tracing` span, written by the global propagator the application
//! installs (`opentelemetry::global::set_text_map_propagator`, usually
//! `TraceContextPropagator`). Without a propagator, or outside any traced
//! span, nothing is added. Without the feature this is a no-op and the
//! OpenTelemetry crates are not built.

use reqwest::header::HeaderMap;

/// Adds the current span's trace context to `headers`.
#[cfg(feature = "otel")]
pub(crate) fn inject(headers: &mut HeaderMap) {
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    let cx = tracing::Span::current().context();
    opentelemetry::global::get_text_map_propagator(|p| {
        p.inject_context(&cx, &mut opentelemetry_http::HeaderInjector(headers))
    });
}

/// Without the `otel` feature: nothing to add.
#[cfg(not(feature = "otel"))]
pub(crate) fn inject(_headers: &mut HeaderMap) {}
