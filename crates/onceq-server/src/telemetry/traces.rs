//! Trace export over OTLP, configured by the standard `OTEL_*` variables.
//!
//! Export is on when `OTEL_EXPORTER_OTLP_ENDPOINT` or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set, unless `OTEL_SDK_DISABLED`
//! is true or `OTEL_TRACES_EXPORTER` is `none`; otherwise no exporter,
//! no thread and no propagator exist. The SDK reads the rest itself (the
//! endpoints, `OTEL_EXPORTER_OTLP_{TRACES_}HEADERS`/`TIMEOUT`/`PROTOCOL`,
//! `OTEL_TRACES_SAMPLER{_ARG}`, `OTEL_SERVICE_NAME`,
//! `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_BSP_*`); this module reads the
//! protocol itself, because the SDK ignores one this build does not speak
//! with only a warning, and, built with JSON too, defaults to JSON where
//! the specification says protobuf.

use opentelemetry::global;
use opentelemetry_otlp::{Protocol, SpanExporter, WithExportConfig};
use opentelemetry_sdk::{Resource, propagation::TraceContextPropagator, trace::SdkTracerProvider};

use super::TelemetryError;

/// The service name when neither `OTEL_SERVICE_NAME` nor a `service.name`
/// in `OTEL_RESOURCE_ATTRIBUTES` gives one.
pub const DEFAULT_SERVICE_NAME: &str = "onceq";

/// The protocol spans are sent over, when `var` asks for trace export
/// (see the module doc); `None` when it does not.
pub fn wanted(var: &impl Fn(&str) -> Option<String>) -> Result<Option<Protocol>, TelemetryError> {
    let set = |name: &str| var(name).filter(|v| !v.trim().is_empty());
    if set("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
        return Ok(None);
    }
    match set("OTEL_TRACES_EXPORTER").map(|v| v.trim().to_ascii_lowercase()) {
        Some(v) if v == "none" => return Ok(None),
        Some(v) if v != "otlp" => {
            return Err(TelemetryError::Setting {
                name: "OTEL_TRACES_EXPORTER",
                problem: format!("{v:?} is not an exporter onceq has"),
                hint: "use otlp (the default) or none",
            });
        }
        _ => {}
    }
    let mut protocol = Protocol::HttpBinary;
    // The signal's own variable wins; the general one is then not read.
    let vars = [
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
    ];
    if let Some((name, v)) = vars.iter().find_map(|n| set(n).map(|v| (*n, v))) {
        protocol = match v.trim().to_ascii_lowercase().as_str() {
            "http/protobuf" => Protocol::HttpBinary,
            "http/json" => Protocol::HttpJson,
            other => {
                return Err(TelemetryError::Setting {
                    name,
                    problem: format!("{other:?} is not a protocol onceq exports over"),
                    hint: "use http/protobuf (the default, port 4318) or http/json",
                });
            }
        };
    }
    let endpoint = set("OTEL_EXPORTER_OTLP_ENDPOINT").is_some()
        || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_some();
    Ok(endpoint.then_some(protocol))
}

/// Starts the exporter (its batch processor runs on a thread of its own)
/// and installs the W3C trace-context propagator that request spans read
/// `traceparent` with.
pub fn install(
    protocol: Protocol,
    var: &impl Fn(&str) -> Option<String>,
) -> Result<SdkTracerProvider, TelemetryError> {
    let exporter = SpanExporter::builder()
        .with_http()
        .with_protocol(protocol)
        .build()
        .map_err(|e| TelemetryError::Exporter(e.to_string()))?;
    let named = var("OTEL_SERVICE_NAME").is_some_and(|v| !v.trim().is_empty())
        || var("OTEL_RESOURCE_ATTRIBUTES").is_some_and(|v| v.contains("service.name="));
    let mut resource = Resource::builder();
    if !named {
        resource = resource.with_service_name(DEFAULT_SERVICE_NAME);
    }
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource.build())
        .build();
    global::set_text_map_propagator(TraceContextPropagator::new());
    Ok(provider)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wanted_with(vars: &[(&str, &str)]) -> Result<Option<Protocol>, TelemetryError> {
        wanted(&|name: &str| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn export_is_on_only_when_an_endpoint_is_set() {
        let proto = Some(Protocol::HttpBinary);
        assert_eq!(wanted_with(&[]).unwrap(), None);
        assert_eq!(wanted_with(&[("OTEL_SERVICE_NAME", "x")]).unwrap(), None);
        let on = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318");
        assert_eq!(wanted_with(&[on]).unwrap(), proto);
        let traces = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c/t");
        assert_eq!(wanted_with(&[traces]).unwrap(), proto);
        assert_eq!(
            wanted_with(&[on, ("OTEL_SDK_DISABLED", "TRUE")]).unwrap(),
            None
        );
        assert_eq!(
            wanted_with(&[on, ("OTEL_TRACES_EXPORTER", "none")]).unwrap(),
            None
        );
    }

    #[test]
    fn a_protocol_this_build_lacks_is_refused_by_name() {
        let on = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318");
        let err = wanted_with(&[on, ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]).unwrap_err();
        assert!(
            err.to_string().contains("OTEL_EXPORTER_OTLP_PROTOCOL"),
            "{err}"
        );
        assert_eq!(
            wanted_with(&[on, ("OTEL_EXPORTER_OTLP_PROTOCOL", "HTTP/JSON")]).unwrap(),
            Some(Protocol::HttpJson)
        );
        // The signal's own variable wins over the general one.
        assert_eq!(
            wanted_with(&[
                on,
                ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ])
            .unwrap(),
            Some(Protocol::HttpBinary)
        );
        assert!(wanted_with(&[on, ("OTEL_TRACES_EXPORTER", "zipkin")]).is_err());
    }
}
