//! A small OTLP receiver: an HTTP server on 127.0.0.1:0 taking
//! `POST /v1/traces` with protobuf bodies, as a collector would, and
//! keeping every span it was sent.

use std::sync::{Arc, Mutex};

use axum::{Router, body::Bytes, extract::State, http::StatusCode, routing::post};
use opentelemetry_proto::tonic::{
    collector::trace::v1::ExportTraceServiceRequest,
    common::v1::{AnyValue, KeyValue, any_value::Value},
    trace::v1::Span,
};
use prost::Message;

/// A span received, with its resource's `service.name`.
#[derive(Clone, Debug)]
pub struct Received {
    pub service: Option<String>,
    pub span: Span,
}

/// The receiver; it serves until dropped (its runtime goes with it).
pub struct Receiver {
    /// Where to point `OTEL_EXPORTER_OTLP_ENDPOINT`.
    pub endpoint: String,
    spans: Arc<Mutex<Vec<Received>>>,
    _rt: tokio::runtime::Runtime,
}

impl Receiver {
    pub fn start() -> Self {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let spans = Arc::new(Mutex::new(Vec::new()));
        let app = Router::new()
            .route("/v1/traces", post(receive))
            .with_state(spans.clone());
        let listener = rt
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        rt.spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self {
            endpoint,
            spans,
            _rt: rt,
        }
    }

    /// Every span received so far.
    pub fn spans(&self) -> Vec<Received> {
        self.spans.lock().unwrap().clone()
    }
}

async fn receive(State(spans): State<Arc<Mutex<Vec<Received>>>>, body: Bytes) -> StatusCode {
    let Ok(req) = ExportTraceServiceRequest::decode(body) else {
        return StatusCode::BAD_REQUEST;
    };
    let mut spans = spans.lock().unwrap();
    for rs in req.resource_spans {
        let service = rs
            .resource
            .as_ref()
            .and_then(|r| string_attr(&r.attributes, "service.name"));
        for ss in rs.scope_spans {
            for span in ss.spans {
                spans.push(Received {
                    service: service.clone(),
                    span,
                });
            }
        }
    }
    StatusCode::OK
}

/// The attribute `key` of `attrs`, if it is a string.
pub fn string_attr(attrs: &[KeyValue], key: &str) -> Option<String> {
    match attr(attrs, key)? {
        Value::StringValue(s) => Some(s.clone()),
        _ => None,
    }
}

/// The attribute `key` of `attrs`, if it is an integer.
pub fn int_attr(attrs: &[KeyValue], key: &str) -> Option<i64> {
    match attr(attrs, key)? {
        Value::IntValue(i) => Some(*i),
        _ => None,
    }
}

fn attr<'a>(attrs: &'a [KeyValue], key: &str) -> Option<&'a Value> {
    attrs
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v: &AnyValue| v.value.as_ref())
}
