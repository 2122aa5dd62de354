//! The `Idempotency-Key` layer for axum/tower, backed by a request ledger
//! (key 1 of the three: the request).
//!
//! A client that retries a POST sends the same `Idempotency-Key`. The layer
//! claims the key in the ledger before the handler runs, records the answer
//! after, and answers retries from the ledger: the handler runs once per
//! key, and the client gets the same answer every time.
//!
//! | a request with key K finds…                     | answer                                        |
//! |-------------------------------------------------|-----------------------------------------------|
//! | nothing (or an entry past its retention)         | claim K, run the handler, record its answer   |
//! | K answered, same request                         | the recorded answer + `Idempotent-Replayed: true` |
//! | K in flight, lease running                       | 409 `REQUEST_IN_FLIGHT` + `Retry-After`       |
//! | K in flight, lease over (its request died)       | take the claim over, run the handler again    |
//! | K used with a different request                  | 422 `IDEMPOTENCY_KEY_REUSED` (or 409)         |
//! | no key                                           | 400 `IDEMPOTENCY_KEY_REQUIRED`, or a generated key, or no ledger |
//! | the ledger failing                               | 503 `LEDGER_UNAVAILABLE` + `Retry-After`      |
//!
//! A request is its method, route and body (JSON in canonical form); a key
//! is scoped by caller (principal) and route. Answers below 500 are
//! recorded; a server error releases the claim so a retry can succeed.
//! GET, HEAD, OPTIONS and TRACE pass through untouched.
//!
//! Running the handler again after a takeover is safe only when what the
//! handler does downstream is keyed too: pass [`IdempotencyKey`] on as the
//! queue's publish key, and the rerun's publish returns the first message.
//!
//! # A ledger entry
//!
//! Rows of `onceq_request_ledger`, in flight (a lease, no answer) or
//! completed (status, headers, body; no lease) — the `CHECK` in the
//! crate's `sql/ledger/*/schema.sql` allows nothing else. The statements
//! under `sql/ledger/` and the judge (`onceq_types::ledger`) are shared
//! with the onceq server and the Node package; the state machine, with
//! which statement makes each move, is in the repository's
//! `docs/state-machines.md` ("A request-ledger entry"), drawn here from
//! there by `scripts/diagrams`:
//!
//! <div class="onceq-diagram">
#![doc = include_str!("ledger.svg")]
//! </div>
//!
//! `complete` and `release` carry the claim's token: a request whose lease
//! was taken over can neither overwrite nor delete its successor's entry.
//!
//! # Modules
//!
//! - [`layer`](IdempotencyLayer): configuration and builder.
//! - `service`: [`Idempotency`], the request's way through the ledger.
//! - `record`: after the handler, record its answer or release the claim.
//! - `fingerprint`: [`Fingerprint`] and the scope.
//! - `key`: the header's rules and the [`IdempotencyKey`] extractor.
//! - `response`: refusals and replays.
//! - [`ledger`]: the [`Ledger`] seam, [`PgLedger`], [`SqliteLedger`].
//! - `purger`: [`spawn_purger`].
//!
//! # Example
//!
//! ```no_run
//! use std::{sync::Arc, time::Duration};
//!
//! use axum::{Json, Router, extract::State, http::StatusCode, routing::post};
//! use onceq::idempotency::{IdempotencyKey, IdempotencyLayer, Ledger, PgLedger, spawn_purger};
//! use serde_json::{Value, json};
//!
//! async fn create_export(
//!     State(queue): State<onceq::Client>,
//!     key: IdempotencyKey,
//!     Json(body): Json<Value>,
//! ) -> (StatusCode, Json<Value>) {
//!     // The request's key is the publish key: if this handler runs again
//!     // after a crash, the queue returns the first message.
//!     let opts = onceq::PublishOptions { idempotency_key: Some(key.0), ..Default::default() };
//!     match queue.publish("exports", &body, opts).await {
//!         Ok(p) => (StatusCode::ACCEPTED, Json(json!({"status": "queued", "message_id": p.message.message_id}))),
//!         // A 5xx is not recorded: the client's retry runs again.
//!         Err(_) => (StatusCode::SERVICE_UNAVAILABLE, Json(json!({"error": "publish failed"}))),
//!     }
//! }
//!
//! # async fn run(pool: deadpool_postgres::Pool) -> Result<(), Box<dyn std::error::Error>> {
//! let ledger: Arc<dyn Ledger> = Arc::new(PgLedger::new(pool).await?);
//! let shutdown = tokio_util::sync::CancellationToken::new();
//! spawn_purger(ledger.clone(), Duration::from_secs(3600), Default::default(), shutdown.clone());
//!
//! let app = Router::new()
//!     .route("/api/exports", post(create_export))
//!     // route_layer: runs after routing, so the route template scopes keys.
//!     .route_layer(IdempotencyLayer::new(ledger).lease(Duration::from_secs(30)))
//!     .with_state(onceq::Client::new("http://127.0.0.1:8787", "oq_...")?);
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
//! axum::serve(listener, app).await?;
//! # Ok(()) }
//! ```

mod fingerprint;
mod key;
mod layer;
pub mod ledger;
mod purger;
mod record;
mod response;
mod service;

use http::HeaderName;

pub use fingerprint::Fingerprint;
pub use key::{IdempotencyKey, MAX_KEY_LEN, MissingIdempotencyLayer};
pub use layer::{
    DEFAULT_LEASE, DEFAULT_MAX_BODY, DEFAULT_MAX_RESPONSE_BODY, DEFAULT_RETENTION, IdempotencyLayer,
};
#[cfg(feature = "postgres")]
pub use ledger::postgres::PgLedger;
#[cfg(feature = "sqlite")]
pub use ledger::sqlite::SqliteLedger;
pub use ledger::{Claim, ClaimOutcome, Ledger, LedgerError, StoredResponse};
pub use purger::spawn_purger;
pub use service::Idempotency;

/// Fail point after the claim, before the handler runs.
pub const AFTER_CLAIM: &str = "idempotency.after_claim";
/// Fail point after the handler answered, before the answer is recorded.
pub const AFTER_HANDLER: &str = "idempotency.after_handler";

/// `Idempotency-Key`: the request header (and, for a generated key, the
/// response header).
pub const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");
/// `Idempotent-Replayed: true` marks an answer sent from the ledger.
pub const IDEMPOTENT_REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");
