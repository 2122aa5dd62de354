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
    InvalidParams(String),
    /// 401: missing, unknown or revoked key.
    #[error("unauthorized: {0}")]
    Unauthorized(String),
    /// 402: the project is past its credit limit.
    #[error("insufficient credit: {0}")]
    InsufficientCredit(String),
    /// 404: no such queue.
    #[error("queue not found: {0}")]
    QueueNotFound(String),
    /// 409: the queue exists with other settings.
    #[error("queue already exists: {0}")]
    QueueAlreadyExists(String),
    /// 413: the payload is over 256 KiB.
    #[error("message too large: {0}")]
    MessageTooLarge(String),
    /// 422: the idempotency key was used with a different payload.
    #[error("idempotency key reused: {0}")]
    KeyReused(String),
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

impl Error {
    pub(crate) fn from_status(
        status: StatusCode,
        body: Option<ErrorBody>,
        retry_after: Option<Duration>,
    ) -> Self {
        let code = body.as_ref().map(|b| b.code);
        let message = body
            .map(|b| b.message)
            .unwrap_or_else(|| status.canonical_reason().unwrap_or("error").to_owned());
        match code {
            Some(ErrorCode::InvalidParams) => Self::InvalidParams(message),
            Some(ErrorCode::Unauthorized) => Self::Unauthorized(message),
            Some(ErrorCode::InsufficientCredit) => Self::InsufficientCredit(message),
            Some(ErrorCode::QueueNotFound) => Self::QueueNotFound(message),
            Some(ErrorCode::QueueAlreadyExists) => Self::QueueAlreadyExists(message),
            Some(ErrorCode::QueueMessageTooLarge) => Self::MessageTooLarge(message),
            Some(ErrorCode::IdempotencyKeyReused) => Self::KeyReused(message),
            Some(ErrorCode::RateLimited) => Self::RateLimited { retry_after },
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
            },
        }
    }

    /// Whether the same call may succeed later: transport failures, 429,
    /// 503 and other 5xx.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Transport(_) | Self::RateLimited { .. } | Self::Unavailable { .. } => true,
            Self::Server { status, .. } => *status >= 500,
            _ => false,
        }
    }

    /// The server's `Retry-After`, if it sent one.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::RateLimited { retry_after } | Self::Unavailable { retry_after, .. } => {
                *retry_after
            }
            _ => None,
        }
    }
}
