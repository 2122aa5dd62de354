//! How SQLite failures become [`StoreError`]s.
//!
//! `Unavailable` promises "nothing was changed, a retry may succeed": that is
//! what a lock held past `busy_timeout` (another process, e.g. the
//! `onceq keys create` CLI, writing the same file), a full disk or an I/O
//! failure mean. Everything else (a constraint violated, SQL that does not
//! fit the schema) is a bug: `Internal`.

use rusqlite::ErrorCode;

use crate::StoreError;

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        if is_transient(&e) {
            StoreError::Unavailable(Box::new(e))
        } else {
            StoreError::Internal(Box::new(e))
        }
    }
}

/// Whether retrying later may succeed.
pub(super) fn is_transient(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(
            ErrorCode::DatabaseBusy
                | ErrorCode::DatabaseLocked
                | ErrorCode::SystemIoFailure
                | ErrorCode::DiskFull
                | ErrorCode::CannotOpen
                | ErrorCode::FileLockingProtocolFailed
                | ErrorCode::OutOfMemory
        )
    )
}

/// Why a whole group failed, kept as text so that every request of the group
/// can get its own `StoreError` (errors are not `Clone`).
#[derive(Debug, Clone)]
pub(super) struct GroupFailure {
    transient: bool,
    message: String,
}

impl GroupFailure {
    /// From the SQLite error that sank the group.
    pub(super) fn new(context: &str, e: &rusqlite::Error) -> Self {
        Self {
            transient: is_transient(e),
            message: format!("{context}: {e}"),
        }
    }

    /// SQLite rolled the transaction back on its own (it does on some I/O
    /// and full-disk errors), so nothing of the group was kept.
    pub(super) fn rolled_back() -> Self {
        Self {
            transient: true,
            message: "the transaction was rolled back by SQLite".into(),
        }
    }

    /// A fresh error for one request of the group.
    pub(super) fn to_error(&self) -> StoreError {
        let e: Box<dyn std::error::Error + Send + Sync> = self.message.clone().into();
        if self.transient {
            StoreError::Unavailable(e)
        } else {
            StoreError::Internal(e)
        }
    }
}

/// The writer thread is gone: no request can be carried out any more.
pub(super) fn writer_gone() -> StoreError {
    StoreError::Unavailable("the SQLite writer thread has stopped".into())
}

/// What a call that got no answer within the store timeout `bound` from
/// the writer thread or a reader (`who`) reports.
pub(super) fn stalled(who: &str, bound: std::time::Duration) -> StoreError {
    StoreError::Unavailable(
        format!("the SQLite {who} did not answer within the store timeout ({bound:?})").into(),
    )
}
