//! Failures of client calls.

use std::time::Duration;

use onceq_types::{ErrorBody, ErrorCode};
use reqwest::StatusCode;

/// What went wrong with a call. Branch on the variants; each server-side
/// variant carries the server's message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// 400: the request was invalid; the message names the field.
    #[error("invalid request: {0}")]
    InvalidParams(Refusal),
    /// 401: missing, unknown or revoked key.
    #[error("unauthorized: {0}")]
    Unauthorized(Refusal),
    /// 402: the project is past its credit limit.
    #[error("insufficient credit: {0}")]
    InsufficientCredit(Refusal),
    /// 404: no such queue.
    #[error("queue not found: {0}")]
    QueueNotFound(Refusal),
    /// 409: the queue exists with other settings.
    #[error("queue already exists: {0}")]
    QueueAlreadyExists(Refusal),
    /// 413: the payload is over 256 KiB.
    #[error("message too large: {0}")]
    MessageTooLarge(Refusal),
    /// 422: the idempotency key was used with a different payload.
    #[error("idempotency key reused: {0}")]
    KeyReused(Refusal),
    /// 404 `MESSAGE_NOT_FOUND`: the queue holds no such message (any more).
    #[error("message not found: {0}")]
    MessageNotFound(Refusal),
    /// 409 `REQUEST_IN_FLIGHT`: a call with this idempotency key is still
    /// being carried out; retry after `retry_after` for its answer.
    #[error("request in flight: {message}")]
    InFlight {
        /// The server's `Retry-After`.
        retry_after: Option<Duration>,
        /// The server's message.
        message: String,
    },
    /// 429: slow down.
    #[error("rate limited (retry after {retry_after:?})")]
    RateLimited {
        /// The server's `Retry-After`.
        retry_after: Option<Duration>,
    },
    /// 503 or 502/504: the server or its database is down; nothing was done.
    #[error("unavailable: {message}")]
    Unavailable {
        /// The server's `Retry-After`.
        retry_after: Option<Duration>,
        /// The server's message.
        message: String,
    },
    /// Any other error answer.
    #[error("server error {status}: {message}")]
    Server {
        /// HTTP status.
        status: u16,
        /// The code, when the answer had one.
        code: Option<ErrorCode>,
        /// The message.
        message: String,
        /// The server's hint, if it gave one.
        hint: Option<String>,
    },
    /// The request never got an answer (connect, timeout, reset).
    #[error("transport: {0}")]
    Transport(#[source] reqwest::Error),
    /// The answer was not the expected JSON.
    #[error("undecodable answer: {0}")]
    Decode(String),
    /// The client was used wrongly (bad key text, bad queue name, payload
    /// that does not serialise).
    #[error("{0}")]
    Config(String),
}

/// What the server said when it refused a call: its message (naming the
/// field for bad input) and its hint (what to do about it), if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The server's message.
    pub message: String,
    /// The server's hint; `None` from servers that send none.
    pub hint: Option<String>,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl Error {
    pub(crate) fn from_status(
        status: StatusCode,
        body: Option<ErrorBody>,
        retry_after: Option<Duration>,
    ) -> Self {
        let code = body.as_ref().map(|b| b.code);
        let (message, hint) = match body {
            Some(b) => (b.message, b.hint),
            None => (
                status.canonical_reason().unwrap_or("error").to_owned(),
                None,
            ),
        };
        let refusal = || Refusal {
            message: message.clone(),
            hint: hint.clone(),
        };
        match code {
            Some(ErrorCode::InvalidParams) => Self::InvalidParams(refusal()),
            Some(ErrorCode::Unauthorized) => Self::Unauthorized(refusal()),
            Some(ErrorCode::InsufficientCredit) => Self::InsufficientCredit(refusal()),
            Some(ErrorCode::QueueNotFound) => Self::QueueNotFound(refusal()),
            Some(ErrorCode::QueueAlreadyExists) => Self::QueueAlreadyExists(refusal()),
            Some(ErrorCode::QueueMessageTooLarge) => Self::MessageTooLarge(refusal()),
            Some(ErrorCode::IdempotencyKeyReused) => Self::KeyReused(refusal()),
            Some(ErrorCode::MessageNotFound) => Self::MessageNotFound(refusal()),
            Some(ErrorCode::RateLimited) => Self::RateLimited { retry_after },
            Some(ErrorCode::RequestInFlight) => Self::InFlight {
                retry_after,
                message,
            },
            Some(ErrorCode::Unavailable) => Self::Unavailable {
                retry_after,
                message,
            },
            _ if status == StatusCode::TOO_MANY_REQUESTS => Self::RateLimited { retry_after },
            _ if matches!(status.as_u16(), 502..=504) => Self::Unavailable {
                retry_after,
                message,
            },
            _ => Self::Server {
                status: status.as_u16(),
                code,
                message,
                hint,
            },
        }
    }

    /// The server's code, for an answer that carried one (`None` for
    /// transport, decode and configuration failures).
    pub fn code(&self) -> Option<ErrorCode> {
        Some(match self {
            Self::InvalidParams(_) => ErrorCode::InvalidParams,
            Self::Unauthorized(_) => ErrorCode::Unauthorized,
            Self::InsufficientCredit(_) => ErrorCode::InsufficientCredit,
            Self::QueueNotFound(_) => ErrorCode::QueueNotFound,
            Self::QueueAlreadyExists(_) => ErrorCode::QueueAlreadyExists,
            Self::MessageTooLarge(_) => ErrorCode::QueueMessageTooLarge,
            Self::KeyReused(_) => ErrorCode::IdempotencyKeyReused,
            Self::MessageNotFound(_) => ErrorCode::MessageNotFound,
            Self::RateLimited { .. } => ErrorCode::RateLimited,
            Self::InFlight { .. } => ErrorCode::RequestInFlight,
            Self::Unavailable { .. } => ErrorCode::Unavailable,
            Self::Server { code, .. } => return *code,
            Self::Transport(_) | Self::Decode(_) | Self::Config(_) => return None,
        })
    }

    /// The server's hint, if its answer carried one.
    pub fn hint(&self) -> Option<&str> {
        match self {
            Self::InvalidParams(r)
            | Self::Unauthorized(r)
            | Self::InsufficientCredit(r)
            | Self::QueueNotFound(r)
            | Self::QueueAlreadyExists(r)
            | Self::MessageTooLarge(r)
            | Self::KeyReused(r)
            | Self::MessageNotFound(r) => r.hint.as_deref(),
            Self::Server { hint, .. } => hint.as_deref(),
            _ => None,
        }
    }

    /// Whether the same call may succeed later: transport failures, 429,
    /// 503 and other 5xx, and 409 `REQUEST_IN_FLIGHT`.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Transport(_)
            | Self::RateLimited { .. }
            | Self::Unavailable { .. }
            | Self::InFlight { .. } => true,
            Self::Server { status, .. } => *status >= 500,
            _ => false,
        }
    }

    /// The server's `Retry-After`, if it sent one.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::RateLimited { retry_after }
            | Self::Unavailable { retry_after, .. }
            | Self::InFlight { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}
