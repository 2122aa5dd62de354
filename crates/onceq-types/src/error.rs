//! Error codes of the HTTP contract.

use serde::{Deserialize, Serialize};

/// Every error code the server answers with. Each has one HTTP status.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// 400: malformed JSON, wrong types, out-of-range numbers, bad names.
    InvalidParams,
    /// 401: missing, unknown or revoked API key.
    Unauthorized,
    /// 402: the project is past its credit limit.
    InsufficientCredit,
    /// 403: the key is valid but its scope does not allow this call (its
    /// actions, or the queue named).
    Forbidden,
    /// 404: the queue does not exist in the caller's project.
    QueueNotFound,
    /// 404: no such endpoint.
    NotFound,
    /// 404: the queue (and its dead-letter queue) holds no message with
    /// that id: never published, or acked, purged or expired since.
    MessageNotFound,
    /// 405: the endpoint exists but not with this method.
    MethodNotAllowed,
    /// 408: the request's body did not arrive in time.
    RequestTimeout,
    /// 409: a queue of that name exists with different settings.
    QueueAlreadyExists,
    /// 409: a request with this `Idempotency-Key` is still being carried
    /// out; see `Retry-After` (queue-api-2.md §4).
    RequestInFlight,
    /// 413: the payload (or the request body) is too large.
    QueueMessageTooLarge,
    /// 422: an idempotency key was reused with a different payload.
    IdempotencyKeyReused,
    /// 429: too many calls; see `Retry-After`.
    RateLimited,
    /// 503: the store is unreachable; nothing was done; see `Retry-After`.
    Unavailable,
    /// 500: a bug. Never answered for bad input.
    Internal,
}

impl ErrorCode {
    /// Every code, in declaration order (documents list them from here).
    pub const ALL: [ErrorCode; 16] = [
        Self::InvalidParams,
        Self::Unauthorized,
        Self::InsufficientCredit,
        Self::Forbidden,
        Self::QueueNotFound,
        Self::NotFound,
        Self::MessageNotFound,
        Self::MethodNotAllowed,
        Self::RequestTimeout,
        Self::QueueAlreadyExists,
        Self::RequestInFlight,
        Self::QueueMessageTooLarge,
        Self::IdempotencyKeyReused,
        Self::RateLimited,
        Self::Unavailable,
        Self::Internal,
    ];

    /// The HTTP status this code is sent with.
    pub fn http_status(self) -> u16 {
        match self {
            Self::InvalidParams => 400,
            Self::Unauthorized => 401,
            Self::InsufficientCredit => 402,
            Self::Forbidden => 403,
            Self::QueueNotFound => 404,
            Self::NotFound => 404,
            Self::MessageNotFound => 404,
            Self::MethodNotAllowed => 405,
            Self::RequestTimeout => 408,
            Self::QueueAlreadyExists => 409,
            Self::RequestInFlight => 409,
            Self::QueueMessageTooLarge => 413,
            Self::IdempotencyKeyReused => 422,
            Self::RateLimited => 429,
            Self::Unavailable => 503,
            Self::Internal => 500,
        }
    }

    /// Whether retrying the same call unchanged may succeed.
    pub fn retryable(self) -> bool {
        matches!(
            self,
            Self::RateLimited
                | Self::Unavailable
                | Self::Internal
                | Self::RequestTimeout
                | Self::RequestInFlight
        )
    }

    /// What a caller should do about it, as the error object's `hint`
    /// says unless the answer gives a sharper one; `None` where nothing
    /// useful can be said (queue-api-2.md, section 1).
    pub fn hint(self) -> Option<&'static str> {
        Some(match self {
            Self::InvalidParams => "fix the field the message names; docs/api.md lists every field",
            Self::Unauthorized => {
                "send Authorization: Bearer <key> with a key of the project (onceq keys create)"
            }
            Self::InsufficientCredit => {
                "raise the project's credit limit (onceq projects set-credit)"
            }
            Self::Forbidden => "use a key whose scope allows this action and queue",
            Self::QueueNotFound => {
                "create the queue first (POST /v1/queue/create), or check its name and the key's project"
            }
            Self::NotFound => "check the path; GET /v1/discovery lists every endpoint",
            Self::MessageNotFound => {
                "check the id and the queue; acked and purged messages are gone"
            }
            Self::MethodNotAllowed => "GET /v1/discovery lists each endpoint's method",
            Self::RequestTimeout => "send the whole body promptly",
            Self::QueueAlreadyExists => {
                "create it with its current settings, or change them with POST /v1/queue/update"
            }
            Self::QueueMessageTooLarge => {
                "keep the data in storage and put a row id in the message"
            }
            Self::RequestInFlight => {
                "retry after Retry-After seconds with the same key: you will get the first request's answer"
            }
            Self::IdempotencyKeyReused => "use a new key for a new payload",
            Self::RateLimited | Self::Unavailable => "retry after Retry-After seconds",
            Self::Internal => return None,
        })
    }

    /// The code as it appears on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidParams => "INVALID_PARAMS",
            Self::Unauthorized => "UNAUTHORIZED",
            Self::InsufficientCredit => "INSUFFICIENT_CREDIT",
            Self::Forbidden => "FORBIDDEN",
            Self::QueueNotFound => "QUEUE_NOT_FOUND",
            Self::NotFound => "NOT_FOUND",
            Self::MessageNotFound => "MESSAGE_NOT_FOUND",
            Self::MethodNotAllowed => "METHOD_NOT_ALLOWED",
            Self::RequestTimeout => "REQUEST_TIMEOUT",
            Self::QueueAlreadyExists => "QUEUE_ALREADY_EXISTS",
            Self::RequestInFlight => "REQUEST_IN_FLIGHT",
            Self::QueueMessageTooLarge => "QUEUE_MESSAGE_TOO_LARGE",
            Self::IdempotencyKeyReused => "IDEMPOTENCY_KEY_REUSED",
            Self::RateLimited => "RATE_LIMITED",
            Self::Unavailable => "UNAVAILABLE",
            Self::Internal => "INTERNAL",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_lists_every_code_once_in_order() {
        // Exhaustive: a new variant fails to compile here until it gets a
        // place, and then the loop fails until ALL holds it there.
        let place = |code: ErrorCode| match code {
            ErrorCode::InvalidParams => 0,
            ErrorCode::Unauthorized => 1,
            ErrorCode::InsufficientCredit => 2,
            ErrorCode::Forbidden => 3,
            ErrorCode::QueueNotFound => 4,
            ErrorCode::NotFound => 5,
            ErrorCode::MessageNotFound => 6,
            ErrorCode::MethodNotAllowed => 7,
            ErrorCode::RequestTimeout => 8,
            ErrorCode::QueueAlreadyExists => 9,
            ErrorCode::RequestInFlight => 10,
            ErrorCode::QueueMessageTooLarge => 11,
            ErrorCode::IdempotencyKeyReused => 12,
            ErrorCode::RateLimited => 13,
            ErrorCode::Unavailable => 14,
            ErrorCode::Internal => 15,
        };
        for (i, code) in ErrorCode::ALL.iter().enumerate() {
            assert_eq!(place(*code), i, "{code}");
        }
    }

    #[test]
    fn wire_name_matches_serde() {
        for code in [
            ErrorCode::InvalidParams,
            ErrorCode::QueueMessageTooLarge,
            ErrorCode::IdempotencyKeyReused,
            ErrorCode::Forbidden,
            ErrorCode::RequestTimeout,
            ErrorCode::InsufficientCredit,
            ErrorCode::MessageNotFound,
            ErrorCode::RequestInFlight,
        ] {
            let json = serde_json::to_string(&code).unwrap();
            assert_eq!(json, format!("\"{}\"", code.as_str()));
        }
    }
}
