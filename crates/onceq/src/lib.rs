//! The onceq Rust toolkit: the three idempotency keys of a web route that
//! hands work to a worker, each where it belongs.
//!
//! - [`client`]: a typed async client for the queue API. Publishing retries
//!   transient failures with the *same* idempotency key (key 2: the publish).
//! - [`idempotency`]: an axum/tower `Idempotency-Key` layer backed by a
//!   request ledger in the application's database (key 1: the request).
//! - [`worker`]: a worker runtime that claims a *job fact* per message in the
//!   application's database and commits the handler's effects together with
//!   the fact (key 3: the work).
//! - [`push`]: receiving push deliveries: verify a webhook request's
//!   `Onceq-Signature`.
//! - [`clock`]: the injectable clock the ledger and the worker use, so tests
//!   move time instead of sleeping.
//! - [`failpoint`]: named points where tests make the pipeline "crash".
//! - `trace_context`: with the `otel` feature, the current span's W3C
//!   trace context sent on every request the client makes and in each
//!   published message's headers; the worker's span continues it.
//! - [`pg`]: a pool for the request ledger and the job facts from a
//!   connection string as libpq reads it (`sslmode`, `sslrootcert`, client
//!   certificates, several hosts): `onceq::pg::PgConnect::parse(url)?.pool(16)?`.
//!
//! ```no_run
//! # async fn demo() -> Result<(), onceq::Error> {
//! let client = onceq::Client::new("http://127.0.0.1:8787", "oq_...")?;
//! let published = client
//!     .publish("emails", &serde_json::json!({"to": "a@example.com"}), Default::default())
//!     .await?;
//! println!("{} (replay: {})", published.message.message_id, published.replay);
//! for msg in client.consume("emails", onceq::ConsumeOptions { max_messages: 10, wait_seconds: 20, ..Default::default() }).await? {
//!     // ... do the work, then:
//!     client.ack("emails", &msg.message_id, Some(&msg.receipt)).await?;
//! }
//! # Ok(()) }
//! ```
#![warn(missing_docs)]

pub mod client;
pub mod clock;
pub mod failpoint;
pub mod idempotency;
pub mod push;
mod trace_context;
pub mod worker;

pub use client::{
    Client, ConsumeOptions, Error, NackOptions, PublishOptions, Published, Refusal, RetryPolicy,
};
#[cfg(feature = "postgres")]
pub use onceq_pg as pg;
pub use onceq_types as types;
