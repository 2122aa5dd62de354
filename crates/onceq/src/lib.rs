//! The onceq Rust toolkit: the three idempotency keys of a web route that
//! hands work to a worker, each where it belongs.
//!
//! - [`client`]: a typed async client for the queue API. Publishing retries
//!   transient failures with the *same* idempotency key (key 2: the publish);
//!   a message's life in hand too: ack with a result, cancel, redrive by id,
//!   the message with its attempts.
//! - [`idempotency`] (feature `axum`, on by default): an axum/tower
//!   `Idempotency-Key` layer backed by a request ledger in the
//!   application's database (key 1: the request).
//! - [`worker`] (feature `postgres`): a worker runtime that claims a *job fact* per message in the
//!   application's database and commits the handler's effects together with
//!   the fact (key 3: the work); it nacks with the handler's error and acks
//!   with the result it set.
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
//!
//! # Features
//!
//! `axum` (the layer), `postgres` (its PostgreSQL ledger and the worker)
//! and `sqlite` (its SQLite ledger) are on by default; `rustls` (HTTPS to
//! the queue server) is not. With `default-features = false` the crate is
//! the client and push verification only: no axum, no database driver.
#![warn(missing_docs)]

pub mod client;
pub mod clock;
pub mod failpoint;
#[cfg(feature = "axum")]
pub mod idempotency;
pub mod push;
mod trace_context;
pub mod worker;

pub use client::{
    BatchAck, Client, ConsumeOptions, CronCreated, Error, NackOptions, PublishOptions, Published,
    Refusal, RetryPolicy,
};
#[cfg(feature = "postgres")]
pub use onceq_pg as pg;
pub use onceq_types as types;

// The README's and the guide's Rust blocks, compiled (and run, unless
// marked `no_run`) by `cargo test --doc -p onceq`, so neither can drift
// from the API. Doctests only: the guide lives outside the package.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide.md")]
struct GuideDoctests;
