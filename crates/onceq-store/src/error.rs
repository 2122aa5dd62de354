//! Failures of store operations.

/// What went wrong. Callers branch on the first variants; `Unavailable` and
/// `Internal` are only reported.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The queue does not exist in the project.
    #[error("queue not found")]
    QueueNotFound,
    /// `queue_create` named an existing queue with different settings.
    #[error("queue already exists with different settings")]
    QueueAlreadyExists(Box<onceq_types::QueueRecord>),
    /// `queue_create` named a dead-letter queue that does not exist.
    #[error("dead-letter queue {0:?} not found")]
    DeadLetterQueueNotFound(String),
    /// A publish reused an idempotency key with a different payload.
    /// `index` is the offending message's position in the batch.
    #[error("idempotency key {key:?} was used with a different payload")]
    IdempotencyKeyReused {
        /// Position in the batch (0 for a single publish).
        index: usize,
        /// The key.
        key: String,
    },
    /// The request is well-formed but cannot be carried out (e.g. redrive of
    /// a queue without a dead-letter queue). The message is safe to show.
    #[error("{0}")]
    Invalid(String),
    /// There is no onceq store where [`OpenMode::Existing`](crate::OpenMode)
    /// was asked to open one: the message names the directory or the
    /// database and what is missing.
    #[error("{0}")]
    NotAStore(String),
    /// The database cannot be reached or refused the connection, or gave
    /// no answer within the store timeout; a retry may succeed. Nothing was
    /// changed, except that a write that timed out while its commit was
    /// under way may still take effect (a publish retried with the same
    /// idempotency key then replays it).
    ///
    /// The cause is in the message, not a `source()`: a chain printer
    /// (`{:#}`, a log line) then says it once.
    #[error("store unavailable: {0}")]
    Unavailable(Box<dyn std::error::Error + Send + Sync>),
    /// A bug or an unexpected database error (the cause in the message, as
    /// for `Unavailable`).
    #[error("store error: {0}")]
    Internal(Box<dyn std::error::Error + Send + Sync>),
}

/// Result of store operations.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

impl StoreError {
    /// Wraps an unexpected error.
    pub fn internal(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self::Internal(e.into())
    }
}
