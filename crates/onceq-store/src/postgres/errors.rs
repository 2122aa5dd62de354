//! Driver errors to [`StoreError`], the retry loop for transactions that
//! lost a race, and the store timeout that bounds each operation.
//!
//! `Unavailable` (the server answers 503 and the caller may retry) is for
//! "the database is not there right now": no connection, pool timeouts,
//! an operation that got no answer within the store timeout ([`within`]),
//! SQLSTATE classes 08 (connection exception) and 53 (insufficient
//! resources), 57P01-57P03 (the server is shutting down or starting), and
//! 25006 (a write refused by a read-only server: a standby, or an old
//! primary during a switchover — the pool then drops every connection that
//! may be on it, see `db::ReadOnlySeen`). Everything else is `Internal`.

use std::future::Future;
use std::time::Duration;

use deadpool_postgres::PoolError;
use tokio_postgres::error::SqlState;

use crate::StoreError;

/// Attempts of one operation before a lost race is reported.
const ATTEMPTS: u32 = 4;

/// What an operation of this backend can fail with, before it is reported.
#[derive(Debug)]
pub(super) enum Error {
    /// From the driver or the server.
    Db(tokio_postgres::Error),
    /// No connection could be had.
    Pool(PoolError),
    /// A decided answer (not found, key reused, ...).
    Store(StoreError),
    /// A concurrent change got in the way; the whole operation is retried.
    Race(&'static str),
}

impl From<tokio_postgres::Error> for Error {
    fn from(e: tokio_postgres::Error) -> Self {
        Error::Db(e)
    }
}

impl From<PoolError> for Error {
    fn from(e: PoolError) -> Self {
        Error::Pool(e)
    }
}

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Self {
        Error::Store(e)
    }
}

impl Error {
    /// Whether running the operation again from the start may succeed:
    /// deadlocks and serialization failures (the transaction was rolled back
    /// whole), and foreign-key violations, which here only ever mean that a
    /// project or a row it owns vanished under us (a migrated database's
    /// messages have none since V24: their statements say `Race` instead);
    /// the retry then sees it gone and answers accordingly.
    fn is_race(&self) -> bool {
        match self {
            Error::Race(_) => true,
            Error::Db(e) => matches!(
                e.code(),
                Some(c) if *c == SqlState::T_R_DEADLOCK_DETECTED
                    || *c == SqlState::T_R_SERIALIZATION_FAILURE
                    || *c == SqlState::FOREIGN_KEY_VIOLATION
            ),
            _ => false,
        }
    }

    /// Whether the server refused a write as read-only: another attempt
    /// takes another connection (the pool dropped those that may be on
    /// that server), which may reach the new primary.
    fn is_read_only(&self) -> bool {
        matches!(self, Error::Db(e) if super::db::is_read_only(e))
    }

    /// The reported form.
    pub(super) fn into_store(self) -> StoreError {
        match self {
            Error::Store(e) => e,
            Error::Race(what) => {
                StoreError::internal(format!("gave up after repeated races: {what}"))
            }
            Error::Db(e) => db(e),
            Error::Pool(PoolError::Backend(e)) => db(e),
            Error::Pool(
                e @ (PoolError::Timeout(_) | PoolError::Closed | PoolError::PostCreateHook(_)),
            ) => StoreError::Unavailable(Box::new(e)),
            Error::Pool(e @ PoolError::NoRuntimeSpecified) => StoreError::internal(e),
        }
    }
}

fn db(e: tokio_postgres::Error) -> StoreError {
    if is_unavailable(&e) {
        return StoreError::Unavailable(with_causes(&e).into());
    }
    // tokio_postgres::Error displays as just "db error"; the server's own
    // message is what an operator needs in the log.
    match e.as_db_error() {
        Some(db) => StoreError::Internal(Box::new(db.clone())),
        None => StoreError::Internal(with_causes(&e).into()),
    }
}

/// The driver's message followed by its causes: tokio-postgres says only
/// "error performing TLS handshake" and keeps the why ("invalid peer
/// certificate: UnknownIssuer") in its source chain.
fn with_causes(e: &tokio_postgres::Error) -> String {
    let mut text = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        let said = c.to_string();
        if !text.ends_with(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        cause = c.source();
    }
    text
}

/// Whether a driver error means the database is not reachable right now.
pub(super) fn is_unavailable(e: &tokio_postgres::Error) -> bool {
    if let Some(code) = e.code() {
        let code = code.code();
        return code.starts_with("08")
            || code.starts_with("53")
            || matches!(code, "57P01" | "57P02" | "57P03" | "25006");
    }
    if e.is_closed() {
        return true;
    }
    // The driver's error kinds are private; an I/O cause means the socket
    // failed (connect refused, reset, timed out).
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        if c.is::<std::io::Error>() {
            return true;
        }
        cause = c.source();
    }
    matches!(
        e.to_string().as_str(),
        "error connecting to server"
            | "timeout waiting for server"
            | "error communicating with the server"
    )
}

/// The answers of `n` requests that failed together with `e` (a group
/// whose shared transaction failed): the first gets `e`, the others the
/// same where a caller acts on it (the queue gone, a request refused, the
/// database unavailable), its message otherwise.
pub(super) fn shared<T>(e: StoreError, n: usize) -> Vec<crate::Result<T>> {
    let message = e.to_string();
    let again = || match &e {
        StoreError::QueueNotFound => StoreError::QueueNotFound,
        StoreError::Invalid(m) => StoreError::Invalid(m.clone()),
        StoreError::Unavailable(_) => StoreError::Unavailable(message.clone().into()),
        _ => StoreError::internal(message.clone()),
    };
    let others: Vec<_> = (1..n).map(|_| Err(again())).collect();
    std::iter::once(Err(e)).chain(others).collect()
}

/// Runs `attempt` until it does not lose a race, a few times at most, all
/// of it within `bound` (the store timeout). Each attempt takes its own
/// connection and transaction, so a retry starts from scratch.
pub(super) async fn retrying<T, F, Fut>(bound: Duration, mut attempt: F) -> crate::Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Error>>,
{
    within(bound, async {
        let mut retry = Retry::default();
        loop {
            match attempt().await {
                Ok(v) => return Ok(v),
                Err(e) => retry.after(e).await?,
            }
        }
    })
    .await
}

/// `op`, or `Unavailable` once it has waited `bound` without finishing (the
/// database stalled: frozen, overloaded, its network black-holed; the pool
/// and connect timeouts only cover getting a connection, not a statement
/// that never returns). `op` is dropped then: a pooled connection it held
/// goes back to the pool with its requests still queued on it, and a
/// transaction it had begun is rolled back by the driver (a transaction
/// begun by hand, on a connection of its own, is the caller's to discard).
/// A write whose COMMIT was already sent may still take effect once the
/// database answers: `Unavailable` here means "unknown", which is why
/// publishes carry idempotency keys (docs/guarantees.md).
pub(super) async fn within<T>(
    bound: Duration,
    op: impl Future<Output = crate::Result<T>>,
) -> crate::Result<T> {
    match tokio::time::timeout(bound, op).await {
        Ok(done) => done,
        Err(_) => Err(stalled(bound)),
    }
}

/// What an operation that ran out of the store timeout `bound` reports.
pub(super) fn stalled(bound: Duration) -> StoreError {
    StoreError::Unavailable(
        format!("the database did not answer within the store timeout ({bound:?})").into(),
    )
}

/// The retry policy of [`retrying`], for loops written out by hand (a
/// closure returning a borrowing future cannot be proven `Send` inside a
/// spawned task).
#[derive(Default)]
pub(super) struct Retry {
    tries: u32,
}

impl Retry {
    /// After a failed attempt: `Ok` (having waited) when it is worth
    /// another, the reported error otherwise.
    pub(super) async fn after(&mut self, e: Error) -> crate::Result<()> {
        self.tries += 1;
        if self.tries < ATTEMPTS && (e.is_race() || e.is_read_only()) {
            tracing::debug!(error = ?e, tries = self.tries, "postgres: retrying after a lost race");
            // Let the winner finish before we go again.
            tokio::time::sleep(Duration::from_millis(u64::from(self.tries) * 5)).await;
            return Ok(());
        }
        Err(e.into_store())
    }
}
