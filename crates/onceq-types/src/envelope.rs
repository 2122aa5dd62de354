//! The response envelope: every answer, success or error, has this shape.

use serde::{Deserialize, Serialize};

use crate::ErrorCode;

/// `{ok, data, error, metadata}`. The HTTP status agrees with `ok`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Envelope<T> {
    /// True when the call succeeded.
    pub ok: bool,
    /// The answer on success, `null` on error.
    pub data: Option<T>,
    /// The error on failure, `null` on success.
    pub error: Option<ErrorBody>,
    /// Facts about the call itself.
    pub metadata: Metadata,
}

/// The `error` member of a failed call.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ErrorBody {
    /// A stable machine-readable code.
    pub code: ErrorCode,
    /// A human-readable message; names the offending field for bad input.
    pub message: String,
    /// One short sentence on what to do about it, or `null` where nothing
    /// useful can be said. Absent in answers of older servers.
    #[serde(default)]
    pub hint: Option<String>,
    /// Whether the same call may succeed if retried unchanged.
    pub retryable: bool,
}

/// The `metadata` member of every answer.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Metadata {
    /// The caller's `X-Request-Id` when it sent a valid one (1-128 bytes of
    /// `[A-Za-z0-9._:-]`), else a UUID v7; also sent as the `x-request-id`
    /// header.
    pub request_id: String,
    /// Milliseconds the server spent on the call.
    pub latency_ms: f64,
    /// What the call cost, from the server's price table. Replays cost 0.
    pub cost_usd: f64,
    /// True when a publish was answered from its idempotency key instead of
    /// storing a new message.
    pub idempotent_replay: bool,
}
