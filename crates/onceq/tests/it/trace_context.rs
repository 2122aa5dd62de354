//! With the `otel` feature, the client's requests carry the caller's trace
//! context: the server's span of a publish made inside a traced span is a
//! child of it, in the same trace. Spans are kept in memory by the SDK's
//! test exporter, behind a process-wide subscriber (the server under test
//! runs in this process, on other threads).

use std::sync::OnceLock;

use opentelemetry::trace::{TraceContextExt, TracerProvider as _};
use opentelemetry_sdk::{
    propagation::TraceContextPropagator,
    trace::{InMemorySpanExporter, SdkTracerProvider},
};
use tracing::Instrument;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::{layer::SubscriberExt, util::SubscriberInitExt};

use crate::harness::Env;

fn spans() -> &'static InMemorySpanExporter {
    static EXPORTER: OnceLock<InMemorySpanExporter> = OnceLock::new();
    EXPORTER.get_or_init(|| {
        let exporter = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(exporter.clone())
            .build();
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")))
            .try_init()
            .expect("no other subscriber in this test binary");
        exporter
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_publish_continues_the_callers_trace() {
    let exporter = spans();
    let env = Env::start().await;
    let caller = tracing::info_span!("caller");
    let caller_cx = caller.context().span().span_context().clone();
    assert!(caller_cx.is_valid());
    env.client()
        .publish("traced", &serde_json::json!({"n": 1}), Default::default())
        .instrument(caller)
        .await
        .unwrap();
    let finished = exporter.get_finished_spans().unwrap();
    let server = finished
        .iter()
        .find(|s| {
            s.name == "POST /v1/queue/publish" && s.span_context.trace_id() == caller_cx.trace_id()
        })
        .unwrap_or_else(|| panic!("no server span in the caller's trace: {finished:#?}"));
    assert_eq!(server.parent_span_id, caller_cx.span_id());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_items_carry_the_callers_trace_unless_they_have_their_own() {
    use onceq::types::request::BatchItem;

    let _exporter = spans();
    let env = Env::start().await;
    let caller = tracing::info_span!("caller");
    let trace_id = caller
        .context()
        .span()
        .span_context()
        .trace_id()
        .to_string();
    let own = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let item = |n: i64, headers: Option<serde_json::Value>| BatchItem {
        payload: Some(serde_json::value::to_raw_value(&n).unwrap()),
        headers: headers.map(|h| serde_json::value::to_raw_value(&h).unwrap()),
        ..Default::default()
    };
    let items = vec![
        item(1, None),
        item(2, Some(serde_json::json!({"x-tenant": "acme"}))),
        item(3, Some(serde_json::json!({"traceparent": own}))),
    ];
    let client = env.client();
    let published = client
        .publish_batch("traced-batch", items)
        .instrument(caller)
        .await
        .unwrap();
    let parent = |i: usize| published[i].headers.get("traceparent").cloned();
    for i in [0, 1] {
        let tp = parent(i).unwrap_or_else(|| panic!("item {i} has no traceparent"));
        assert!(
            tp.contains(&trace_id),
            "item {i}: {tp} is not in {trace_id}"
        );
    }
    assert_eq!(
        published[1].headers.get("x-tenant").map(String::as_str),
        Some("acme")
    );
    assert_eq!(parent(2).as_deref(), Some(own), "the caller's own wins");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_processes_each_message_in_a_consumer_span_its_ack_within() {
    use opentelemetry::{Value, trace::SpanKind};

    use crate::worker::support;

    let exporter = spans();
    let (env, ctl) = support::env().await;
    let id = support::publish(&env, Some("export:traced"), "req-traced").await;
    // Per-message acks: each is sent inside its message's process span. A
    // batched ack (the default) is one call for many messages, sent after
    // their spans ended, so no one message's trace holds it.
    let worker = support::worker(&env, &ctl, |c| c.batch_acks = false).await;
    assert_eq!(worker.drain().await.unwrap().done, 1);
    let finished = exporter.get_finished_spans().unwrap();
    let process = finished
        .iter()
        .find(|s| {
            s.attributes.iter().any(|kv| {
                kv.key.as_str() == "messaging.message.id" && kv.value == Value::from(id.clone())
            })
        })
        .unwrap_or_else(|| panic!("no span processing {id}: {finished:#?}"));
    assert_eq!(process.name, format!("process {}", support::QUEUE));
    assert_eq!(process.span_kind, SpanKind::Consumer);
    // The ack the worker sent while processing is served in that trace.
    let ack = finished
        .iter()
        .find(|s| {
            s.name == "POST /v1/queue/ack" && s.parent_span_id == process.span_context.span_id()
        })
        .unwrap_or_else(|| panic!("no ack under the process span: {finished:#?}"));
    assert_eq!(ack.span_context.trace_id(), process.span_context.trace_id());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_trace_from_the_publisher_to_the_workers_handler() {
    use crate::worker::support;

    let exporter = spans();
    let (env, ctl) = support::env().await;
    let publisher = tracing::info_span!("publisher");
    let publisher_cx = publisher.context().span().span_context().clone();
    let published = async {
        let opts = onceq::PublishOptions {
            idempotency_key: Some("req-one-trace".into()),
            ..Default::default()
        };
        env.client()
            .publish(
                support::QUEUE,
                &serde_json::json!({"job_fact": "export:one-trace"}),
                opts,
            )
            .await
            .unwrap()
    }
    .instrument(publisher)
    .await;
    // The message carries the publisher's context in its headers.
    let traceparent = &published.message.headers["traceparent"];
    assert!(
        traceparent.contains(&publisher_cx.trace_id().to_string()),
        "{traceparent}"
    );
    // The worker runs outside any span of the publisher's; per-message acks
    // so the ack joins the message's trace (see the test above).
    let worker = support::worker(&env, &ctl, |c| c.batch_acks = false).await;
    assert_eq!(worker.drain().await.unwrap().done, 1);
    let finished = exporter.get_finished_spans().unwrap();
    let in_trace: Vec<_> = finished
        .iter()
        .filter(|s| s.span_context.trace_id() == publisher_cx.trace_id())
        .collect();
    let process = in_trace
        .iter()
        .find(|s| s.name == format!("process {}", support::QUEUE))
        .unwrap_or_else(|| {
            panic!("the worker's span is not in the publisher's trace: {in_trace:#?}")
        });
    assert_eq!(process.parent_span_id, publisher_cx.span_id());
    for server in ["POST /v1/queue/publish", "POST /v1/queue/ack"] {
        assert!(
            in_trace.iter().any(|s| s.name == server),
            "{server} is not in the trace: {in_trace:#?}"
        );
    }
}
