//! Wire types shared by the onceq server, its client and its worker.
//!
//! Nothing here does I/O. The modules map one-to-one to parts of the HTTP
//! contract (`docs/api.md`):
//!
//! - [`envelope`]: the `{ok, data, error, metadata}` wrapper every answer uses.
//! - [`error`]: the error codes, their HTTP statuses and retryability.
//! - [`queue`]: queue records, settings and statistics.
//! - [`message`]: messages as published, as consumed and as looked up
//!   (`MessageDetail`), and their states.
//! - [`attempt`]: a message's ended hand-outs, and the bounds of a nack's
//!   `error` and an ack's `result`.
//! - [`request`]: the JSON bodies clients send.
//! - [`reply`]: the `data` bodies of the smaller answers (ack, nack, ...).
//! - [`push`]: push subscriptions (webhooks): their calls, their record,
//!   and what a delivery carries (body, headers, signature scheme).
//! - [`webhook`]: account webhooks: their calls, records, event names and
//!   what a delivery carries.
//! - [`capability`]: the endpoint catalogue served by `GET /v1/discovery`.
//! - [`account`]: the usage and balance answers.
//! - [`admin`]: the admin API's bodies and records (keys and projects of
//!   every project).
//! - [`scope`]: what a key may do: actions and queue-name patterns.
//! - [`names`]: validation of queue names.
//! - [`ledger`]: the request ledger's one decision (what an entry the claim
//!   did not take means) and its `Retry-After`, shared by the server's call
//!   ledger and the toolkit's ledgers.
//! - `openapi` (feature `openapi`): schemas the `ToSchema` derives cannot
//!   express; the server builds its OpenAPI document from these types.
//! - [`cron`]: cron schedules: their calls, their record and their runs.
//! - [`clock`]: the injectable clock (the one thing here that reads state:
//!   the system time).
#![warn(missing_docs)]

pub mod account;
pub mod admin;
pub mod attempt;
pub mod capability;
pub mod clock;
pub mod cron;
pub mod envelope;
pub mod error;
pub mod ledger;
pub mod message;
pub mod names;
#[cfg(feature = "openapi")]
pub mod openapi;
pub mod push;
pub mod queue;
pub mod reply;
pub mod request;
pub mod scope;
pub mod webhook;

pub use attempt::{Attempt, AttemptOutcome};
pub use envelope::{Envelope, ErrorBody, Metadata};
pub use error::ErrorCode;
pub use message::{
    ConsumedMessage, Headers, MessageDetail, MessageState, MessageStatus, PublishedMessage,
};
pub use queue::{QueueRecord, QueueStats, QueueType, RetryBackoff};

/// The largest payload a message may carry: the byte length of its compact
/// JSON serialisation (256 KiB, as on Infrai's hosted queue).
pub const MAX_PAYLOAD_BYTES: usize = 262_144;

/// The most headers a message may carry (queue-api-2.md §3).
pub const MAX_HEADERS: usize = 64;

/// The longest a header name may be, in bytes (`[A-Za-z0-9_.-]`).
pub const MAX_HEADER_NAME_BYTES: usize = 128;

/// The longest a header value may be, in bytes.
pub const MAX_HEADER_VALUE_BYTES: usize = 4_096;

/// The most messages one `consume` or `publish_batch` call handles.
pub const MAX_BATCH: usize = 10;

/// The longest a consumer may long-poll (`wait_seconds`).
pub const MAX_WAIT_SECONDS: i64 = 20;

/// The longest a lease (visibility timeout) may be: 12 hours.
pub const MAX_VISIBILITY_TIMEOUT_SECONDS: i64 = 43_200;

/// The longest a message may be delayed: 7 days.
pub const MAX_DELAY_SECONDS: i64 = 604_800;

/// The longest a queue may keep a message: 30 days.
pub const MAX_RETENTION_DAYS: i64 = 30;

/// The longest a queue may keep a finished (acked or cancelled) message:
/// 30 days, in seconds (the stores' CHECK constraints say the same).
pub const MAX_COMPLETED_RETENTION_SECONDS: i64 = 2_592_000;

// The README's example, compiled and run by `cargo test --doc`.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
