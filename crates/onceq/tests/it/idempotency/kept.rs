//! The seed's behaviour that stays: replay of the same request, refusal of a
//! reused key, the key handed to the handler, one run under a burst.

use std::{sync::atomic::Ordering, time::Duration};

use axum::http::StatusCode;
use serde_json::json;

use super::{
    app::{Backend, TestApp},
    on_both_ledgers,
};

on_both_ledgers!(
    same_key_same_body_replays_status_headers_and_body,
    different_body_is_422_or_409_when_configured,
    handler_reads_the_idempotency_key,
    concurrent_duplicates_run_the_handler_once,
    oversized_body_is_413_and_safe_methods_pass_through,
);

async fn same_key_same_body_replays_status_headers_and_body(b: Backend) {
    let app = TestApp::start(b).await;
    let body = json!({"tenant": "acme", "format": "csv"});
    let first = app
        .post("/api/exports", Some("exp_2026_07_26_acme"), &body)
        .await;
    assert_eq!(first.status, 202);
    assert!(!first.replayed());
    assert_eq!(first.json()["status"], "queued");
    let id = first.message_id();
    assert!(!id.is_empty());

    let second = app
        .post("/api/exports", Some("exp_2026_07_26_acme"), &body)
        .await;
    assert_eq!(second.status, 202);
    assert!(second.replayed());
    assert_eq!(second.raw, first.raw, "the same body, byte for byte");
    assert_eq!(
        second.header("location"),
        Some(format!("/api/exports/{id}").as_str())
    );
    assert_eq!(second.header("location"), first.header("location"));
    assert_eq!(second.header("content-type"), first.header("content-type"));
    assert_eq!(app.calls(), 1, "the handler ran once");
    assert_eq!(app.h.message_ids.lock().unwrap().len(), 1);
    assert_eq!(app.queued().await, 1, "one message on the queue");
}

async fn different_body_is_422_or_409_when_configured(b: Backend) {
    let app = TestApp::start(b).await;
    let key = Some("exp-reuse");
    assert_eq!(
        app.post("/api/exports", key, &json!({"tenant": "acme"}))
            .await
            .status,
        202
    );
    let other = json!({"tenant": "globex"});
    let r = app.post("/api/exports", key, &other).await;
    assert_eq!(
        (r.status, r.code().as_str()),
        (422, "IDEMPOTENCY_KEY_REUSED")
    );
    assert!(!r.replayed());
    assert_eq!(app.calls(), 1);

    // The seed's choice, per route: 409.
    let seed_like = app
        .sibling(|l| l.mismatch_status(StatusCode::CONFLICT))
        .await;
    let r = seed_like.post("/api/exports", key, &other).await;
    assert_eq!(
        (r.status, r.code().as_str()),
        (409, "IDEMPOTENCY_KEY_REUSED")
    );
    assert_eq!(seed_like.calls(), 0);
    assert_eq!(app.queued().await, 1);
}

async fn handler_reads_the_idempotency_key(b: Backend) {
    let app = TestApp::start(b).await;
    let r = app.post("/api/notes", Some("note-7"), &json!({})).await;
    assert_eq!(r.json()["key"], "note-7");
    // The export route published under it.
    app.post("/api/exports", Some("exp-key"), &json!({"tenant": "acme"}))
        .await;
    let got = app
        .env
        .client()
        .consume(super::app::QUEUE, Default::default())
        .await
        .unwrap();
    assert!(
        got[0].payload.get().contains("export:exp-key"),
        "{:?}",
        got[0].payload
    );
    // Without the layer, extracting the key is a server bug, said as a 500.
    let bare = app
        .caller
        .send("/bare/key", Some("k"), None, "text/plain", vec![])
        .await;
    assert_eq!((bare.status, bare.code().as_str()), (500, "INTERNAL"));
}

async fn concurrent_duplicates_run_the_handler_once(b: Backend) {
    let app = TestApp::start(b).await;
    let body = json!({"tenant": "acme", "format": "csv"});
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let (c, body) = (app.caller.clone(), body.clone());
            tokio::spawn(async move { c.post("/api/exports", Some("burst"), &body).await })
        })
        .collect();
    let mut fresh = 0;
    let mut ids = std::collections::HashSet::new();
    for t in tasks {
        let r = t.await.unwrap();
        match r.status {
            202 => {
                fresh += usize::from(!r.replayed());
                ids.insert(r.message_id());
            }
            409 => assert_eq!(r.code(), "REQUEST_IN_FLIGHT"),
            s => panic!("unexpected {s}: {r:?}"),
        }
    }
    assert_eq!(fresh, 1, "exactly one request ran the handler");
    assert_eq!(ids.len(), 1);
    assert_eq!(app.calls(), 1);
    assert_eq!(app.queued().await, 1);
}

async fn oversized_body_is_413_and_safe_methods_pass_through(b: Backend) {
    let app = TestApp::start_with(b, |l| l.max_body(64).lease(Duration::from_secs(5))).await;
    let big = json!({"blob": "x".repeat(100)});
    let r = app.post("/api/exports", Some("big"), &big).await;
    assert_eq!((r.status, r.code().as_str()), (413, "PAYLOAD_TOO_LARGE"));
    assert_eq!(app.calls(), 0);
    // GET needs no key and never touches the ledger.
    assert_eq!(app.caller.get("/api/health").await.status, 200);
    assert_eq!(app.ledger_rows().await, 0);
    // A configured lease shows in Retry-After.
    app.h.fail_publishes.store(0, Ordering::SeqCst);
    let caller = app.caller.clone();
    let slow = tokio::spawn(async move { caller.post("/api/slow", Some("s"), &json!({})).await });
    app.h.entered.notified().await;
    assert_eq!(
        app.post("/api/slow", Some("s"), &json!({}))
            .await
            .header("retry-after"),
        Some("5")
    );
    app.h.gate.notify_one();
    assert_eq!(slow.await.unwrap().status, 202);
}
