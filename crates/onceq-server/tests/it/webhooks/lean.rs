//! A project without webhooks pays nothing for them: no webhook store call
//! (hence no statement) on publish, consume, nack (with an error, or one
//! that dead-letters), lease expiry, queue create and delete. The same
//! calls do record events once a webhook listens, so the test can fail.
//!
//! Store calls are seen as the `store` spans `onceq_store::traced` makes
//! (their `otel.name` is the operation), captured by a subscriber of this
//! test's thread: the runtime is current-thread, so the server's tasks run
//! here too.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tracing::{Instrument, field::Visit};
use tracing_subscriber::{Layer, layer::Context, prelude::*, registry::LookupSpan};

use crate::harness::{Backend, TestServer};

/// Records the operation of every `store` span.
#[derive(Clone, Default)]
struct StoreCalls(Arc<Mutex<Vec<String>>>);

impl StoreCalls {
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut self.0.lock().unwrap())
    }
}

struct OtelName(Option<String>);

impl Visit for OtelName {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "otel.name" {
            self.0 = Some(value.to_owned());
        }
    }
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "otel.name" {
            self.0 = Some(format!("{value:?}").trim_matches('"').to_owned());
        }
    }
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> Layer<S> for StoreCalls {
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        _: &tracing::span::Id,
        _: Context<'_, S>,
    ) {
        if attrs.metadata().name() != "store" {
            return;
        }
        let mut name = OtelName(None);
        attrs.record(&mut name);
        if let Some(op) = name.0 {
            self.0.lock().unwrap().push(op);
        }
    }
}

/// The calls of a day's work on queue `name`: publish, consume, a nack with
/// an error that dead-letters, another message's lease expiring, delete.
async fn work(s: &TestServer, name: &str) {
    s.post("/v1/queue/create", json!({"name": name, "max_retries": 0}))
        .await
        .ok();
    s.publish(name, json!({"n": 1})).await;
    let r = s.post("/v1/queue/consume", json!({"queue": name})).await;
    let m = r.ok().data()["items"][0].clone();
    s.post(
        "/v1/queue/nack",
        json!({"queue": name, "message_id": m["message_id"], "receipt": m["receipt"], "error": "boom"}),
    )
    .await
    .ok();
    s.publish(name, json!({"n": 2})).await;
    s.post(
        "/v1/queue/consume",
        json!({"queue": name, "visibility_timeout": 30}),
    )
    .await
    .ok();
    s.expire_leases_after(31)
        .instrument(tracing::info_span!("reaper"))
        .await;
    s.post("/v1/queue/delete", json!({"queue": name}))
        .await
        .ok();
}

async fn no_webhook_store_call_without_webhooks(b: Backend) {
    let calls = StoreCalls::default();
    let _guard = tracing_subscriber::registry()
        .with(calls.clone())
        .set_default();
    let s = TestServer::in_process_with(b, crate::push::config()).await;
    calls.take();
    work(&s, "jobs").await;
    let seen = calls.take();
    assert!(
        seen.iter().any(|op| op == "message_nack"),
        "spans are captured: {seen:?}"
    );
    let webhook: Vec<_> = seen
        .iter()
        .filter(|op| op.starts_with("webhook_"))
        .collect();
    assert!(
        webhook.is_empty(),
        "no webhook, no webhook store call: {webhook:?}"
    );

    super::register(&s, "https://hooks.example/in", json!(["*"])).await;
    calls.take();
    work(&s, "jobs2").await;
    let inserts = calls
        .take()
        .into_iter()
        .filter(|op| op == "webhook_event_insert")
        .count();
    // queue.created, message.dead_lettered + message.failed (the nack),
    // message.failed + message.dead_lettered (the lease), queue.deleted.
    assert_eq!(inserts, 6, "a listened-to event is one insert");
}

#[tokio::test]
async fn sqlite() {
    no_webhook_store_call_without_webhooks(Backend::Sqlite).await
}

#[tokio::test]
async fn postgres() {
    no_webhook_store_call_without_webhooks(Backend::Postgres).await
}
