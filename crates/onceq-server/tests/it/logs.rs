//! API keys never reach the logs, even at TRACE level.

use std::{
    io::Write,
    sync::{Arc, Mutex},
};

use serde_json::json;

use crate::harness::{Backend, TestServer};

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn keys_are_never_logged() {
    let captured = Captured::default();
    let sink = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || sink.clone())
        .with_ansi(false)
        .finish();
    let unknown = "oq_zzzzzzzz_thisisnotakeybutlookslikeone0000000000";
    let secret = tracing::subscriber::with_default(subscriber, || {
        // One thread: everything the server does on the runtime is logged
        // through this subscriber.
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let s = TestServer::start(Backend::Sqlite).await;
            s.publish("jobs", json!({"n": 1})).await;
            s.get("/v1/queue/stats/nope")
                .await
                .err(404, "QUEUE_NOT_FOUND");
            s.post_raw("/v1/queue/publish", "{bad").await;
            s.send(reqwest::Method::GET, "/v1/queue/list", None, Some(unknown))
                .await
                .err(401, "UNAUTHORIZED");
            s.key.clone()
        })
    });
    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(
        logs.contains("/v1/queue/publish"),
        "requests are logged at all: {logs}"
    );
    assert!(!logs.contains(&secret), "a key was logged:\n{logs}");
    assert!(!logs.contains(unknown), "a key was logged:\n{logs}");
    assert!(!logs.to_lowercase().contains("bearer"), "{logs}");
}
