//! One test per hole of `three-keys.md`, Layer 1. Each drives the route into
//! the state the seed mishandled and fails if the fix is taken out.
//!
//! Over 400 lines: one file, one test per hole, in the spec's order, so the
//! list reads as the spec does.

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use jiff::Timestamp;
use onceq::idempotency::{
    AFTER_CLAIM, AFTER_HANDLER, Claim, ClaimOutcome, Ledger, LedgerError, StoredResponse,
    spawn_purger,
};
use serde_json::json;

use super::{
    app::{Backend, TestApp},
    on_both_ledgers,
};

on_both_ledgers!(
    hole1_retry_while_in_flight_is_409_with_retry_after,
    hole2_database_error_is_503_not_409,
    hole3_crash_after_claim_is_taken_over_after_the_lease,
    hole4_failed_release_is_covered_by_the_lease,
    hole5_key_order_does_not_change_the_fingerprint,
    hole6_keys_are_scoped_by_caller_and_route,
    hole7_missing_key_is_400_or_generated,
    hole8_entries_expire_and_are_purged,
    hole9_4xx_recorded_5xx_not,
    a_blink_while_recording_is_retried,
);

fn export() -> serde_json::Value {
    json!({"tenant": "acme", "format": "csv"})
}

/// Hole 1: the seed found a row without a status and crashed.
async fn hole1_retry_while_in_flight_is_409_with_retry_after(b: Backend) {
    let app = TestApp::start(b).await;
    let caller = app.caller.clone();
    let first =
        tokio::spawn(async move { caller.post("/api/slow", Some("slow-1"), &json!({})).await });
    app.h.entered.notified().await;

    let retry = app.post("/api/slow", Some("slow-1"), &json!({})).await;
    assert_eq!(retry.status, 409, "{retry:?}");
    assert_eq!(retry.code(), "REQUEST_IN_FLIGHT");
    assert_eq!(
        retry.header("retry-after"),
        Some("30"),
        "the whole lease is left"
    );
    app.env.advance(12).await;
    let retry = app.post("/api/slow", Some("slow-1"), &json!({})).await;
    assert_eq!(
        (retry.status, retry.header("retry-after")),
        (409, Some("18"))
    );
    assert_eq!(app.calls(), 1, "retries never reach the handler");

    app.h.gate.notify_one();
    let first = first.await.unwrap();
    assert_eq!(first.status, 202);
    assert!(!first.replayed());
    let after = app.post("/api/slow", Some("slow-1"), &json!({})).await;
    assert_eq!(after.status, 202);
    assert!(after.replayed());
    assert_eq!(after.raw, first.raw);
    assert_eq!(app.calls(), 1);
}

/// Hole 2: the seed reported any insert error as "already in flight".
async fn hole2_database_error_is_503_not_409(b: Backend) {
    let app = TestApp::start(b).await;
    assert_eq!(
        app.post("/api/exports", Some("ok-1"), &export())
            .await
            .status,
        202
    );

    app.break_ledger().await;
    for key in ["new-1", "ok-1"] {
        let r = app.post("/api/exports", Some(key), &export()).await;
        assert_eq!(r.status, 503, "{key}: {r:?}");
        assert_eq!(r.code(), "LEDGER_UNAVAILABLE");
        assert_eq!(r.header("retry-after"), Some("1"));
    }
    assert_eq!(app.calls(), 1, "nothing ran without a claim");
    assert_eq!(app.queued().await, 1);
}

/// Hole 3: a crash between claim and record left the key claimed for ever.
async fn hole3_crash_after_claim_is_taken_over_after_the_lease(b: Backend) {
    let app = TestApp::start(b).await;

    // Crash after the handler published, before its answer was recorded.
    app.fail.arm(AFTER_HANDLER, 1);
    let crashed = app.post("/api/exports", Some("exp-3"), &export()).await;
    assert_eq!(crashed.status, 500);
    assert_eq!(app.calls(), 1);
    let retry = app.post("/api/exports", Some("exp-3"), &export()).await;
    assert_eq!(
        (retry.status, retry.code().as_str()),
        (409, "REQUEST_IN_FLIGHT")
    );
    app.env.advance(29).await;
    let retry = app.post("/api/exports", Some("exp-3"), &export()).await;
    assert_eq!(
        (retry.status, retry.header("retry-after")),
        (409, Some("1"))
    );

    app.env.advance(2).await;
    let taken = app.post("/api/exports", Some("exp-3"), &export()).await;
    assert_eq!(taken.status, 202, "{taken:?}");
    assert!(!taken.replayed(), "the handler ran again");
    assert_eq!(app.calls(), 2);
    let ids = app.h.message_ids.lock().unwrap().clone();
    assert_eq!(ids.len(), 2);
    assert_eq!(
        ids[0], ids[1],
        "the rerun's publish returned the first message"
    );
    assert_eq!(taken.message_id(), ids[0]);
    assert_eq!(app.queued().await, 1, "the publish key deduped the rerun");
    let replay = app.post("/api/exports", Some("exp-3"), &export()).await;
    assert!(replay.replayed());
    assert_eq!(replay.message_id(), ids[0]);

    // Crash right after the claim: the handler never ran.
    app.fail.arm(AFTER_CLAIM, 1);
    let crashed = app.post("/api/exports", Some("exp-3b"), &export()).await;
    assert_eq!(crashed.status, 500);
    assert_eq!(app.calls(), 2);
    assert_eq!(
        app.post("/api/exports", Some("exp-3b"), &export())
            .await
            .status,
        409
    );
    app.env.advance(31).await;
    let taken = app.post("/api/exports", Some("exp-3b"), &export()).await;
    assert_eq!(taken.status, 202);
    assert_eq!(app.calls(), 3);
    assert_eq!(app.queued().await, 2);
}

/// A ledger that fails on purpose, as when the database drops the
/// connection just then: every `release`, and the first
/// `complete_failures` calls of `complete`.
struct Flaky {
    inner: Arc<dyn Ledger>,
    release_fails: bool,
    complete_failures: AtomicUsize,
    release_attempts: AtomicUsize,
}

impl Flaky {
    fn new(inner: Arc<dyn Ledger>, release_fails: bool, complete_failures: usize) -> Self {
        Self {
            inner,
            release_fails,
            complete_failures: AtomicUsize::new(complete_failures),
            release_attempts: AtomicUsize::new(0),
        }
    }
}

#[async_trait::async_trait]
impl Ledger for Flaky {
    async fn claim(&self, c: &Claim, now: Timestamp) -> Result<ClaimOutcome, LedgerError> {
        self.inner.claim(c, now).await
    }
    async fn complete(
        &self,
        scope: &str,
        key: &str,
        token: &str,
        r: &StoredResponse,
        now: Timestamp,
    ) -> Result<bool, LedgerError> {
        let left = self.complete_failures.load(Ordering::SeqCst);
        if left > 0 {
            self.complete_failures.store(left - 1, Ordering::SeqCst);
            return Err(LedgerError::new("connection reset by peer"));
        }
        self.inner.complete(scope, key, token, r, now).await
    }
    async fn release(
        &self,
        s: &str,
        k: &str,
        t: &str,
        now: Timestamp,
    ) -> Result<bool, LedgerError> {
        self.release_attempts.fetch_add(1, Ordering::SeqCst);
        if self.release_fails {
            return Err(LedgerError::new("connection reset by peer"));
        }
        self.inner.release(s, k, t, now).await
    }
    async fn purge_expired(&self, now: Timestamp) -> Result<u64, LedgerError> {
        self.inner.purge_expired(now).await
    }
}

/// Hole 4: when the seed's DELETE after a failed publish failed too, the
/// claimed row stayed for ever.
async fn hole4_failed_release_is_covered_by_the_lease(b: Backend) {
    let flaky = Arc::new(std::sync::OnceLock::<Arc<Flaky>>::new());
    let hold = flaky.clone();
    let wrap = Box::new(move |inner: Arc<dyn Ledger>| -> Arc<dyn Ledger> {
        let l = Arc::new(Flaky::new(inner, true, 0));
        hold.set(l.clone()).ok().unwrap();
        l
    });
    let app = TestApp::start_wrapped(b, wrap, |l| l).await;
    let flaky = flaky.get().unwrap();

    app.h.fail_publishes.store(1, Ordering::SeqCst);
    let failed = app.post("/api/exports", Some("exp-4"), &export()).await;
    assert_eq!(
        (failed.status, failed.code().as_str()),
        (503, "PUBLISH_FAILED")
    );
    assert_eq!(
        flaky.release_attempts.load(Ordering::SeqCst),
        1,
        "the layer tried to release"
    );

    let retry = app.post("/api/exports", Some("exp-4"), &export()).await;
    assert_eq!(
        (retry.status, retry.header("retry-after")),
        (409, Some("30"))
    );
    app.env.advance(31).await;
    let ok = app.post("/api/exports", Some("exp-4"), &export()).await;
    assert_eq!(ok.status, 202, "{ok:?}");
    assert_eq!(app.calls(), 2);
    assert_eq!(app.queued().await, 1);
}

/// The record after the handler is retried: a brief ledger failure there
/// must not leave the key in flight (retries would get 409 until the lease
/// ends).
async fn a_blink_while_recording_is_retried(b: Backend) {
    let wrap = Box::new(|inner: Arc<dyn Ledger>| -> Arc<dyn Ledger> {
        Arc::new(Flaky::new(inner, false, 1))
    });
    let app = TestApp::start_wrapped(b, wrap, |l| l).await;
    let first = app.post("/api/exports", Some("exp-blink"), &export()).await;
    assert_eq!(first.status, 202);
    let again = app.post("/api/exports", Some("exp-blink"), &export()).await;
    assert_eq!(again.status, 202, "recorded despite the blink: {again:?}");
    assert!(again.replayed());
    assert_eq!(app.calls(), 1);
}

/// Hole 5: the seed hashed `JSON.stringify`, which keeps key order.
async fn hole5_key_order_does_not_change_the_fingerprint(b: Backend) {
    let app = TestApp::start(b).await;
    let first = app.caller.send(
        "/api/exports",
        Some("exp-5"),
        None,
        "application/json",
        br#"{"tenant":"acme","format":"csv","opts":{"gzip":true,"sep":";"}}"#.to_vec(),
    );
    let first = first.await;
    assert_eq!(first.status, 202);
    let reordered = app
        .caller
        .send(
            "/api/exports",
            Some("exp-5"),
            None,
            "application/json; charset=utf-8",
            b"{\n  \"opts\": {\"sep\": \";\", \"gzip\": true},\n  \"format\": \"csv\",\n  \"tenant\": \"acme\"\n}".to_vec(),
        )
        .await;
    assert_eq!(reordered.status, 202, "{reordered:?}");
    assert!(reordered.replayed());
    assert_eq!(reordered.message_id(), first.message_id());
    assert_eq!(app.calls(), 1);
    assert_eq!(app.queued().await, 1);
}

/// Hole 6: the seed's keys were global, so a key reused by another caller or
/// on another route replayed a foreign answer.
async fn hole6_keys_are_scoped_by_caller_and_route(b: Backend) {
    let app = TestApp::start(b).await;
    let c = &app.caller;
    let (alice, bob) = (Some("Bearer alice"), Some("Bearer bob"));
    let note = json!({"text": "hi"});

    let a = c.post_as(alice, "/api/notes", Some("k"), &note).await;
    assert_eq!((a.status, a.call()), (201, 1));
    let again = c.post_as(alice, "/api/notes", Some("k"), &note).await;
    assert!(again.replayed());
    assert_eq!(again.call(), 1);

    // Bob's "k" is his own: not alice's answer, and no mismatch either.
    let other = json!({"text": "bob's"});
    let bo = c.post_as(bob, "/api/notes", Some("k"), &other).await;
    assert_eq!(
        (bo.status, bo.call(), bo.replayed()),
        (201, 2, false),
        "{bo:?}"
    );
    let anon = c.post_as(None, "/api/notes", Some("k"), &note).await;
    assert_eq!((anon.call(), anon.replayed()), (3, false));
    // Alice's "k" on another route is another entry.
    let elsewhere = c.post_as(alice, "/api/comments", Some("k"), &note).await;
    assert_eq!(
        (elsewhere.status, elsewhere.call(), elsewhere.replayed()),
        (201, 4, false)
    );

    // Each still replays its own.
    assert_eq!(
        c.post_as(bob, "/api/notes", Some("k"), &other).await.call(),
        2
    );
    assert_eq!(
        c.post_as(alice, "/api/comments", Some("k"), &note)
            .await
            .call(),
        4
    );
    assert_eq!(
        c.post_as(alice, "/api/notes", Some("k"), &note)
            .await
            .call(),
        1
    );
    assert_eq!(app.calls(), 4);
}

/// Hole 7: without a key, the seed made every retry a new job.
async fn hole7_missing_key_is_400_or_generated(b: Backend) {
    let app = TestApp::start(b).await;
    let r = app.post("/api/exports", None, &export()).await;
    assert_eq!(
        (r.status, r.code().as_str()),
        (400, "IDEMPOTENCY_KEY_REQUIRED")
    );
    for bad in ["a b".to_owned(), "k".repeat(256)] {
        let r = app.post("/api/exports", Some(&bad), &export()).await;
        assert_eq!(
            (r.status, r.code().as_str()),
            (400, "IDEMPOTENCY_KEY_INVALID")
        );
    }
    assert_eq!(app.calls(), 0);

    // Opted in to a generated key: echoed, and a retry with it replays.
    let gen_app = app.sibling(|l| l.generate_missing_key()).await;
    let r = gen_app.post("/api/exports", None, &export()).await;
    assert_eq!(r.status, 202);
    let key = r
        .header("idempotency-key")
        .expect("the generated key is echoed")
        .to_owned();
    let uuid = uuid::Uuid::parse_str(&key).unwrap();
    assert_eq!(uuid.get_version_num(), 7);
    let retry = gen_app.post("/api/exports", Some(&key), &export()).await;
    assert!(retry.replayed());
    assert_eq!(retry.message_id(), r.message_id());
    assert_eq!(gen_app.calls(), 1);
    assert_eq!(app.queued().await, 1, "published under the generated key");

    // Not required: runs without the ledger, every time.
    let open = app.sibling(|l| l.require_key(false)).await;
    let first = open.post("/api/notes", None, &json!({})).await;
    let second = open.post("/api/notes", None, &json!({})).await;
    assert_eq!((first.call(), second.call()), (1, 2));
    assert_eq!(first.json()["key"], serde_json::Value::Null);
    assert!(first.header("idempotency-key").is_none());
}

/// Hole 8: the seed's ledger grew for ever.
async fn hole8_entries_expire_and_are_purged(b: Backend) {
    let app = TestApp::start_with(b, |l| l.retention(Duration::from_secs(3600))).await;
    let note = json!({"text": "hi"});
    assert_eq!(app.post("/api/notes", Some("a"), &note).await.call(), 1);
    assert_eq!(app.post("/api/notes", Some("b"), &note).await.call(), 2);
    app.env.advance(1800).await;
    assert_eq!(app.post("/api/notes", Some("c"), &note).await.call(), 3);

    app.env.advance(1799).await; // one second before "a" and "b" expire
    assert!(app.post("/api/notes", Some("a"), &note).await.replayed());
    assert_eq!(
        app.ledger.purge_expired(app.env.clock.now()).await.unwrap(),
        0
    );
    assert_eq!(app.ledger_rows().await, 3);

    app.env.advance(2).await;
    // Past its retention an entry is absent, purged or not.
    let a = app.post("/api/notes", Some("a"), &note).await;
    assert_eq!((a.call(), a.replayed()), (4, false));
    assert_eq!(app.ledger_rows().await, 3);

    // The background purger deletes "b"; "a" (new) and "c" stay.
    let stop = tokio_util::sync::CancellationToken::new();
    let purger = spawn_purger(
        app.ledger.clone(),
        Duration::from_secs(3600),
        app.env.clock.clone(),
        stop.clone(),
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while app.ledger_rows().await != 2 {
        assert!(std::time::Instant::now() < deadline, "the purger never ran");
        tokio::task::yield_now().await;
    }
    stop.cancel();
    purger.await.unwrap();
    assert_eq!(app.post("/api/notes", Some("c"), &note).await.call(), 3);

    app.env.advance(3600).await;
    assert_eq!(
        app.ledger.purge_expired(app.env.clock.now()).await.unwrap(),
        2
    );
    assert_eq!(app.ledger_rows().await, 0);
}

/// Hole 9: the seed recorded only its 202.
async fn hole9_4xx_recorded_5xx_not(b: Backend) {
    let app = TestApp::start(b).await;
    let bad = app.post("/api/bad", Some("bad-9"), &export()).await;
    assert_eq!((bad.status, bad.code().as_str()), (400, "INVALID_FORMAT"));
    let again = app.post("/api/bad", Some("bad-9"), &export()).await;
    assert_eq!(again.status, 400);
    assert!(again.replayed(), "a 4xx is a final answer");
    assert_eq!(again.raw, bad.raw);
    assert_eq!(app.calls(), 1);

    let boom = app.post("/api/boom", Some("boom-9"), &json!({})).await;
    assert_eq!(boom.status, 500);
    let again = app.post("/api/boom", Some("boom-9"), &json!({})).await;
    assert_eq!(
        again.status, 500,
        "not replayed, not 409: the handler ran again"
    );
    assert!(!again.replayed());
    assert_eq!(app.calls(), 3);

    // The seed's kept behaviour: a failed publish frees the key at once.
    app.h.fail_publishes.store(1, Ordering::SeqCst);
    assert_eq!(
        app.post("/api/exports", Some("exp-9"), &export())
            .await
            .status,
        503
    );
    let ok = app.post("/api/exports", Some("exp-9"), &export()).await;
    assert_eq!((ok.status, ok.replayed()), (202, false), "{ok:?}");
    assert_eq!(app.calls(), 5);
    assert_eq!(app.queued().await, 1);
    assert!(
        app.post("/api/exports", Some("exp-9"), &export())
            .await
            .replayed()
    );
}
