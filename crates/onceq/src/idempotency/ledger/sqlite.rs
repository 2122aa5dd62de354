//! [`SqliteLedger`]: the request ledger in a SQLite file, for applications
//! whose data lives in SQLite (or that have no database of their own).

use std::{
    path::Path,
    sync::{Arc, Mutex},
    time::Duration,
};

use jiff::Timestamp;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::{
    CLAIM_ATTEMPTS, Claim, ClaimOutcome, Entry, Ledger, LedgerError, PURGE_BATCH, StoredResponse,
};

ledger_sql!("sqlite");

/// How long a statement waits for another process's write lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The request ledger in a SQLite file (table `onceq_request_ledger`).
///
/// One connection, used from the blocking pool: SQLite has a single writer
/// anyway, and every ledger call writes.
#[derive(Clone)]
pub struct SqliteLedger {
    conn: Arc<Mutex<Connection>>,
}

impl std::fmt::Debug for SqliteLedger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteLedger").finish_non_exhaustive()
    }
}

impl SqliteLedger {
    /// Opens (or creates) the ledger at `path`: WAL, `synchronous = FULL`
    /// (a recorded answer survives power loss, as a committed claim must),
    /// a busy timeout for other processes on the same file.
    pub async fn open(path: impl AsRef<Path>) -> Result<Self, LedgerError> {
        let path = path.as_ref().to_owned();
        let conn = tokio::task::spawn_blocking(move || -> rusqlite::Result<Connection> {
            let conn = Connection::open(path)?;
            conn.busy_timeout(BUSY_TIMEOUT)?;
            conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0))?;
            conn.pragma_update(None, "synchronous", "FULL")?;
            conn.execute_batch(SCHEMA)?;
            Ok(conn)
        })
        .await
        .map_err(LedgerError::new)?
        .map_err(LedgerError::new)?;
        Ok(Self {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    /// Deletes at most `limit` entries past their retention at `now` (one
    /// `purge.sql`, so the writer lock is never held long);
    /// [`Ledger::purge_expired`] calls it until a batch comes back short.
    pub async fn purge_batch(&self, now: Timestamp, limit: i64) -> Result<u64, LedgerError> {
        self.run(move |conn| {
            let n = conn
                .prepare_cached(PURGE)
                .and_then(|mut s| s.execute(params![micros(now), limit]))
                .map_err(LedgerError::new)?;
            Ok(n as u64)
        })
        .await
    }

    /// Runs `f` on the connection, off the async threads.
    async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, LedgerError> + Send + 'static,
    ) -> Result<T, LedgerError> {
        let conn = self.conn.clone();
        tokio::task::spawn_blocking(move || {
            let mut conn = conn
                .lock()
                .map_err(|_| LedgerError::new("sqlite connection lock poisoned"))?;
            f(&mut conn)
        })
        .await
        .map_err(LedgerError::new)?
    }
}

fn micros(t: Timestamp) -> i64 {
    t.as_microsecond()
}

fn from_micros(us: i64) -> Result<Timestamp, LedgerError> {
    Timestamp::from_microsecond(us).map_err(LedgerError::new)
}

/// Claim statement, then (when not claimed) the read, in one IMMEDIATE
/// transaction: the write lock is held throughout, so the entry read is the
/// one the claim statement saw.
fn claim_once(
    conn: &mut Connection,
    c: &Claim,
    now: Timestamp,
) -> Result<Option<ClaimOutcome>, LedgerError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(LedgerError::new)?;
    let claimed = tx
        .prepare_cached(CLAIM)
        .and_then(|mut s| {
            s.query_row(
                params![
                    c.scope,
                    c.key,
                    c.fingerprint.as_bytes().as_slice(),
                    c.token,
                    micros(c.locked_until),
                    micros(now),
                    micros(c.expires_at)
                ],
                |_| Ok(()),
            )
            .optional()
        })
        .map_err(LedgerError::new)?
        .is_some();
    if claimed {
        tx.commit().map_err(LedgerError::new)?;
        return Ok(Some(ClaimOutcome::Claimed));
    }
    type Row = (
        Vec<u8>,
        Option<i64>,
        Option<String>,
        Option<Vec<u8>>,
        Option<i64>,
        i64,
    );
    let row: Option<Row> = tx
        .prepare_cached(SELECT)
        .and_then(|mut s| {
            s.query_row(params![c.scope, c.key], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            })
            .optional()
        })
        .map_err(LedgerError::new)?;
    tx.commit().map_err(LedgerError::new)?;
    let Some((fingerprint, status, headers, body, locked_until, expires_at)) = row else {
        return Ok(None);
    };
    let response = match status {
        Some(s) => Some(StoredResponse::from_columns(
            s,
            headers.as_deref().unwrap_or("[]"),
            body.unwrap_or_default(),
        )?),
        None => None,
    };
    let entry = Entry {
        fingerprint,
        answer: response,
        locked_until: locked_until.map(from_micros).transpose()?,
        expires_at: from_micros(expires_at)?,
    };
    Ok(entry.judge(c.fingerprint.as_bytes(), now).map(Into::into))
}

#[async_trait::async_trait]
impl Ledger for SqliteLedger {
    async fn claim(&self, c: &Claim, now: Timestamp) -> Result<ClaimOutcome, LedgerError> {
        let c = c.clone();
        self.run(move |conn| {
            for _ in 0..CLAIM_ATTEMPTS {
                if let Some(outcome) = claim_once(conn, &c, now)? {
                    return Ok(outcome);
                }
            }
            Err(LedgerError::new("the entry kept changing during the claim"))
        })
        .await
    }

    async fn complete(
        &self,
        scope: &str,
        key: &str,
        token: &str,
        r: &StoredResponse,
        now: Timestamp,
    ) -> Result<bool, LedgerError> {
        let (scope, key, token) = (scope.to_owned(), key.to_owned(), token.to_owned());
        let (status, headers, body) = (
            i64::from(r.status.as_u16()),
            r.headers_json(),
            r.body.to_vec(),
        );
        self.run(move |conn| {
            let n = conn
                .prepare_cached(COMPLETE)
                .and_then(|mut s| {
                    s.execute(params![
                        scope,
                        key,
                        token,
                        status,
                        headers,
                        body,
                        micros(now)
                    ])
                })
                .map_err(LedgerError::new)?;
            Ok(n == 1)
        })
        .await
    }

    async fn release(
        &self,
        scope: &str,
        key: &str,
        token: &str,
        _now: Timestamp,
    ) -> Result<bool, LedgerError> {
        let (scope, key, token) = (scope.to_owned(), key.to_owned(), token.to_owned());
        self.run(move |conn| {
            let n = conn
                .prepare_cached(RELEASE)
                .and_then(|mut s| s.execute(params![scope, key, token]))
                .map_err(LedgerError::new)?;
            Ok(n == 1)
        })
        .await
    }

    async fn purge_expired(&self, now: Timestamp) -> Result<u64, LedgerError> {
        let mut total = 0;
        loop {
            let n = self.purge_batch(now, PURGE_BATCH).await?;
            total += n;
            if n < PURGE_BATCH as u64 {
                return Ok(total);
            }
        }
    }
}
