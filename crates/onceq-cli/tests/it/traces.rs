//! Traces over OTLP from the real `onceq serve`, received by the test's
//! own collector (`otlp`): a request sent with a W3C `traceparent` is
//! served in a span of the caller's trace whose parent is the caller's
//! span, named and filled as the `http.server` conventions say; each store
//! call it makes is a child span of it; a request without one starts a
//! trace of its own.

use opentelemetry_proto::tonic::trace::v1::span::SpanKind;

use crate::{
    otlp::{Received, Receiver, int_attr, string_attr},
    process::ServerProcess,
};

const TRACE_ID: &str = "0af7651916cd43dd8448eb211c80319c";
const CALLER_SPAN: &str = "b7ad6b7169203331";

fn named<'a>(spans: &'a [Received], name: &str) -> Vec<&'a Received> {
    spans.iter().filter(|s| s.span.name == name).collect()
}

#[test]
fn request_and_store_spans_continue_the_callers_trace() {
    let collector = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(
        &["--data-dir", dir.path().to_str().unwrap()],
        &[
            ("ONCEQ_API_KEY", "trace-key"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.endpoint),
        ],
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    let http = reqwest::Client::new();
    let (publish, stats) = rt.block_on(async {
        let publish = http
            .post(format!("{}/v1/queue/publish", server.url))
            .bearer_auth("trace-key")
            .header("traceparent", format!("00-{TRACE_ID}-{CALLER_SPAN}-01"))
            .json(&serde_json::json!({"queue": "jobs", "payload": {"n": 1}}))
            .send()
            .await
            .unwrap();
        let stats = http
            .get(format!("{}/v1/queue/stats/jobs", server.url))
            .bearer_auth("trace-key")
            .send()
            .await
            .unwrap();
        (publish.status().as_u16(), stats.status().as_u16())
    });
    assert_eq!((publish, stats), (200, 200));
    // SIGTERM: the server flushes its last spans before it exits.
    let (clean, logs) = server.terminate();
    assert!(clean, "{}", logs.join("\n"));
    let spans = collector.spans();

    let servers = named(&spans, "POST /v1/queue/publish");
    assert_eq!(servers.len(), 1, "{spans:#?}");
    let request = &servers[0].span;
    assert_eq!(servers[0].service.as_deref(), Some("onceq"));
    assert_eq!(hex::encode(&request.trace_id), TRACE_ID);
    assert_eq!(hex::encode(&request.parent_span_id), CALLER_SPAN);
    assert_eq!(request.kind, SpanKind::Server as i32);
    let attrs = &request.attributes;
    assert_eq!(
        string_attr(attrs, "http.request.method").as_deref(),
        Some("POST")
    );
    assert_eq!(
        string_attr(attrs, "http.route").as_deref(),
        Some("/v1/queue/publish")
    );
    assert_eq!(
        int_attr(attrs, "http.response.status_code"),
        Some(200),
        "{attrs:?}"
    );

    let stores = named(&spans, "message_publish");
    assert_eq!(stores.len(), 1, "{spans:#?}");
    let store = &stores[0].span;
    assert_eq!(store.trace_id, request.trace_id);
    assert_eq!(store.parent_span_id, request.span_id);
    assert_eq!(store.kind, SpanKind::Client as i32);
    assert_eq!(
        string_attr(&store.attributes, "db.system.name").as_deref(),
        Some("sqlite")
    );
    assert_eq!(
        string_attr(&store.attributes, "db.operation.name").as_deref(),
        Some("message_publish")
    );

    // Without a traceparent: a trace of its own, its span a root.
    let stats = named(&spans, "GET /v1/queue/stats/{queue}");
    assert_eq!(stats.len(), 1, "{spans:#?}");
    assert_ne!(stats[0].span.trace_id, request.trace_id);
    assert!(stats[0].span.parent_span_id.is_empty());
    let queue_stats = named(&spans, "queue_stats");
    assert_eq!(queue_stats.len(), 1, "{spans:#?}");
    assert_eq!(queue_stats[0].span.parent_span_id, stats[0].span.span_id);
}
