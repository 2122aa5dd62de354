//! The onceq Rust toolkit.
//!
//! - [`client`]: a typed async client for the whole queue API. Publishing
//!   retries transient failures with the *same* idempotency key, so a
//!   publish that timed out after the server stored it is not stored twice.
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

pub use client::{
    Client, ConsumeOptions, Error, NackOptions, PublishOptions, Published, RetryPolicy,
};
pub use onceq_types as types;
