//! [`ApiError`]: the one error type of the HTTP layer. It picks the status,
//! the code and a message that is safe to show; the underlying cause of a
//! 5xx is logged here and never sent to the client.

use axum::{
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use onceq_store::StoreError;
use onceq_types::{ErrorBody, ErrorCode};

use crate::envelope::error_response;

/// Marks an answer caused by a failing store call (a response extension),
/// for the metrics middleware to count.
#[derive(Debug, Clone, Copy)]
pub struct StoreFailure {
    /// `UNAVAILABLE` (the database could not be reached) rather than
    /// `INTERNAL`.
    pub unavailable: bool,
}

/// An error answer.
#[derive(Debug)]
pub struct ApiError {
    code: ErrorCode,
    message: String,
    cause: Option<Box<dyn std::error::Error + Send + Sync>>,
    retry_after_secs: Option<u64>,
    /// Overrides the code's own hint (`ErrorCode::hint`).
    hint: Option<String>,
}

impl ApiError {
    /// An error with a code and a client-facing message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            cause: None,
            retry_after_secs: None,
            hint: None,
        }
    }

    /// The same error with a hint sharper than its code's.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// The hint set with [`ApiError::with_hint`], if any.
    pub fn hint(&self) -> Option<&str> {
        self.hint.as_deref()
    }

    /// 404 `MESSAGE_NOT_FOUND` naming the message and its queue.
    pub fn message_not_found(queue: &str, message_id: &str) -> Self {
        Self::new(
            ErrorCode::MessageNotFound,
            format!("message {message_id:?} not found in queue {queue:?} or its dead-letter queue"),
        )
    }

    /// 429 `RATE_LIMITED`, to retry after `secs` seconds.
    pub fn rate_limited(secs: u64, message: impl Into<String>) -> Self {
        Self {
            retry_after_secs: Some(secs.max(1)),
            ..Self::new(ErrorCode::RateLimited, message)
        }
    }

    /// 409 `REQUEST_IN_FLIGHT`: another request holds this
    /// `Idempotency-Key`; retry after `secs` seconds (when its lease ends).
    pub fn in_flight(secs: u64, key: &str) -> Self {
        Self {
            retry_after_secs: Some(secs.max(1)),
            ..Self::new(
                ErrorCode::RequestInFlight,
                format!("a request with Idempotency-Key {key:?} is still being carried out"),
            )
        }
    }

    /// 403 `FORBIDDEN`.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Forbidden, message)
    }

    /// 400 `INVALID_PARAMS`.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidParams, message)
    }

    /// 404 `QUEUE_NOT_FOUND` naming the queue.
    pub fn queue_not_found(queue: &str) -> Self {
        Self::new(
            ErrorCode::QueueNotFound,
            format!("queue {queue:?} not found"),
        )
    }

    /// The code.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// Seconds to wait before retrying, for the answers that say it (429,
    /// 503 and 409 `REQUEST_IN_FLIGHT`).
    pub fn retry_after(&self) -> Option<u64> {
        matches!(
            self.code,
            ErrorCode::Unavailable | ErrorCode::RateLimited | ErrorCode::RequestInFlight
        )
        .then(|| self.retry_after_secs.unwrap_or(1))
    }

    /// The client-facing message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Logs the cause of a 5xx (never sent to the client); answers that
    /// are not `ApiError`'s own (the dashboard's HTML pages) call this too.
    pub fn log_cause(&self) {
        if let Some(cause) = &self.cause {
            if self.code == ErrorCode::Unavailable {
                crate::outage::unavailable("request", cause);
            } else {
                tracing::error!(code = %self.code, cause = %cause, "request failed");
            }
        }
    }

    /// Maps a store failure, naming `queue` where the error concerns it.
    pub fn from_store(err: StoreError, queue: &str) -> Self {
        match err {
            StoreError::QueueNotFound => Self::queue_not_found(queue),
            StoreError::QueueAlreadyExists(_) => Self::new(
                ErrorCode::QueueAlreadyExists,
                format!("queue {queue:?} already exists with different settings"),
            ),
            StoreError::DeadLetterQueueNotFound(dlq) => Self::new(
                ErrorCode::QueueNotFound,
                format!("dead_letter_queue {dlq:?} not found: create it first"),
            ),
            StoreError::IdempotencyKeyReused { index, key } => Self::new(
                ErrorCode::IdempotencyKeyReused,
                format!(
                    "idempotency_key {key:?} (message {index}) was already used with a different payload"
                ),
            ),
            StoreError::Invalid(message) => Self::invalid(message),
            StoreError::Unavailable(cause) => Self {
                cause: Some(cause),
                ..Self::new(
                    ErrorCode::Unavailable,
                    "the store is unavailable; nothing was done, retry later",
                )
            },
            // Only the admin commands open a store that must exist; a
            // server never answers this, so it is a bug if it does.
            StoreError::NotAStore(why) => Self {
                cause: Some(why.into()),
                ..Self::new(ErrorCode::Internal, "internal error")
            },
            StoreError::Internal(cause) => Self {
                cause: Some(cause),
                ..Self::new(ErrorCode::Internal, "internal error")
            },
        }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        self.log_cause();
        let status = StatusCode::from_u16(self.code.http_status())
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let retry_after = self.retry_after();
        let mut res = error_response(
            status,
            ErrorBody {
                code: self.code,
                message: self.message,
                hint: self.hint.or_else(|| self.code.hint().map(str::to_owned)),
                retryable: self.code.retryable(),
            },
        );
        if self.cause.is_some() {
            res.extensions_mut().insert(StoreFailure {
                unavailable: self.code == ErrorCode::Unavailable,
            });
        }
        if let Some(secs) = retry_after {
            res.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        res
    }
}
