//! Logs and traces of the process: one `tracing` subscriber with up to two
//! layers, each with a filter of its own.
//!
//! - the log layer ([`logs`]): text or JSON lines on stderr, filtered by
//!   `ONCEQ_LOG` or `RUST_LOG`;
//! - the trace layer ([`traces`]), only when `OTEL_*` asks for export:
//!   onceq's spans (INFO and DEBUG) sent over OTLP, whatever the log
//!   filter says, so `RUST_LOG=warn` quietens the log without thinning
//!   the traces.
//!
//! [`http`] makes each request's span. With export off and logs at INFO,
//! the spans nobody records (a store call's, at DEBUG) are disabled
//! callsites: the hot path pays an interest check for them.

pub mod http;
pub mod logs;
pub mod traces;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::{Level, Metadata};
use tracing_subscriber::{Layer, filter::Targets, layer::SubscriberExt, util::SubscriberInitExt};

pub use logs::LogFormat;

/// A setting of the environment that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    /// A variable's value is wrong.
    #[error("{name}: {problem} (hint: {hint})")]
    Setting {
        /// The variable.
        name: &'static str,
        /// What is wrong with it.
        problem: String,
        /// What would do.
        hint: &'static str,
    },
    /// The OTLP exporter could not be built.
    #[error("OTLP trace exporter: {0}")]
    Exporter(String),
    /// A subscriber was installed already.
    #[error("logging was set up twice: {0}")]
    Installed(String),
}

/// Keeps trace export running; [`shutdown`](Self::shutdown) flushes it.
#[must_use = "dropping it stops trace export; call shutdown() at exit"]
pub struct Telemetry {
    provider: Option<SdkTracerProvider>,
}

impl Telemetry {
    /// Whether spans are being exported.
    pub fn exporting(&self) -> bool {
        self.provider.is_some()
    }

    /// Sends the spans not yet exported and stops the exporter (waits for
    /// at most the exporter's timeout).
    pub fn shutdown(mut self) {
        if let Some(provider) = self.provider.take()
            && let Err(e) = provider.shutdown()
        {
            eprintln!("warning: could not flush the last traces: {e}");
        }
    }
}

/// Installs the process's subscriber from the environment (see the module
/// doc) with log lines in `format`.
pub fn init(format: LogFormat) -> Result<Telemetry, TelemetryError> {
    let var = |name: &str| std::env::var(name).ok();
    let filter = logs::filter(var)?;
    let provider = match traces::wanted(&var)? {
        Some(protocol) => Some(traces::install(protocol, &var)?),
        None => None,
    };
    let log_layer = match format {
        LogFormat::Text => tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .with_filter(filter)
            .boxed(),
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .with_span_list(true)
            .with_writer(std::io::stderr)
            .with_filter(filter)
            .boxed(),
    };
    let trace_layer = provider.as_ref().map(|p| {
        tracing_opentelemetry::layer()
            .with_tracer(p.tracer("onceq"))
            .with_filter(trace_filter())
    });
    tracing_subscriber::registry()
        .with(log_layer)
        .with(trace_layer)
        .try_init()
        .map_err(|e| TelemetryError::Installed(e.to_string()))?;
    if provider.is_some() {
        tracing::info!("exporting traces over OTLP");
    }
    Ok(Telemetry { provider })
}

/// What the trace layer records: onceq's own spans down to DEBUG (a store
/// call's) and its events at INFO and above (they become span events);
/// never the HTTP stack's or the exporter's own (which would trace their
/// own export).
fn trace_filter<S>() -> impl tracing_subscriber::layer::Filter<S> + Send + Sync + 'static
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    use tracing_subscriber::filter::FilterExt;
    let ours = Targets::new()
        .with_target("onceq", Level::DEBUG)
        .with_target("onceq_server", Level::DEBUG)
        .with_target("onceq_store", Level::DEBUG);
    ours.and(tracing_subscriber::filter::filter_fn(|m: &Metadata<'_>| {
        m.is_span() || *m.level() <= Level::INFO
    }))
}
