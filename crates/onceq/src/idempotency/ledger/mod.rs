//! The request ledger: where the layer remembers which keys it has seen and
//! what it answered.
//!
//! - this module: the [`Ledger`] seam and the values crossing it.
//! - [`stored`]: [`StoredResponse`], a recorded answer and its header codec.
//! - [`postgres`]: [`PgLedger`](postgres::PgLedger), on the application's
//!   PostgreSQL (feature `postgres`).
//! - [`sqlite`]: [`SqliteLedger`](sqlite::SqliteLedger), in a SQLite file
//!   (feature `sqlite`).
//!
//! Both backends run the same statements (in their own dialect, under the
//! crate's `sql/ledger/`, shared with the onceq server and the Node
//! package) and decide with the same judge (`onceq_types::ledger`), so
//! they cannot drift; `sql/cases/ledger.json` pins the rules for all.

/// The ledger's statements of one dialect, from `sql/ledger/<dialect>/`:
/// both backends run the same set under the same names, so the list is
/// written once (here, before the backends' modules, which use it).
#[cfg(any(feature = "postgres", feature = "sqlite"))]
macro_rules! ledger_sql {
    ($dialect:literal) => {
        const SCHEMA: &str = include_str!(concat!("../../../sql/ledger/", $dialect, "/schema.sql"));
        const CLAIM: &str = include_str!(concat!("../../../sql/ledger/", $dialect, "/claim.sql"));
        const SELECT: &str = include_str!(concat!("../../../sql/ledger/", $dialect, "/select.sql"));
        const COMPLETE: &str = include_str!(concat!("../../../sql/ledger/", $dialect, "/complete.sql"));
        const RELEASE: &str = include_str!(concat!("../../../sql/ledger/", $dialect, "/release.sql"));
        const PURGE: &str = include_str!(concat!("../../../sql/ledger/", $dialect, "/purge.sql"));
    };
}

#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(feature = "sqlite")]
pub mod sqlite;
pub mod stored;

use jiff::Timestamp;

use super::fingerprint::Fingerprint;
pub use stored::StoredResponse;

/// Why a ledger call failed. Callers only report it (the layer answers 503
/// and logs the cause), so it is opaque.
#[derive(Debug, thiserror::Error)]
#[error("request ledger: {0}")]
pub struct LedgerError(#[source] Box<dyn std::error::Error + Send + Sync>);

impl LedgerError {
    /// Wraps any error a backend hits.
    pub fn new(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self(e.into())
    }
}

/// One attempt to claim a key.
#[derive(Debug, Clone)]
pub struct Claim {
    /// Who asked, and where: principal + method + route. Keys are unique
    /// only within a scope.
    pub scope: String,
    /// The `Idempotency-Key`.
    pub key: String,
    /// What was asked (method, route, canonical body).
    pub fingerprint: Fingerprint,
    /// Names this claim; `complete` and `release` only touch the entry while
    /// it still carries it, so a request whose lease was taken over cannot
    /// overwrite or delete the newer holder's entry.
    pub token: String,
    /// The lease: until then a retry is told the request is in flight.
    pub locked_until: Timestamp,
    /// After this the entry counts as absent and may be purged.
    pub expires_at: Timestamp,
}

/// What a claim found.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ClaimOutcome {
    /// The caller holds the key (new entry, expired entry, or a lease taken
    /// over): run the handler.
    Claimed,
    /// The same key with another fingerprint.
    Mismatch,
    /// Another request holds the key and its lease runs until then.
    InFlight {
        /// End of the holder's lease.
        locked_until: Timestamp,
    },
    /// The request was answered before: replay this.
    Completed(StoredResponse),
}

/// The request ledger. Every method takes `now` (from the layer's clock),
/// never the database's clock, so tests move time instead of sleeping.
///
/// Implementations must make [`claim`](Ledger::claim) race-safe: of two
/// concurrent claims of one free key exactly one gets
/// [`ClaimOutcome::Claimed`]. Any failure is an error (the layer answers 503),
/// never a made-up outcome.
#[async_trait::async_trait]
pub trait Ledger: Send + Sync + 'static {
    /// Claims `claim.key` in `claim.scope`, or says why not.
    async fn claim(&self, claim: &Claim, now: Timestamp) -> Result<ClaimOutcome, LedgerError>;

    /// Records the answer of the claim named `token`. False when the entry
    /// no longer carries that token (taken over, expired and purged).
    async fn complete(
        &self,
        scope: &str,
        key: &str,
        token: &str,
        response: &StoredResponse,
        now: Timestamp,
    ) -> Result<bool, LedgerError>;

    /// Forgets the claim named `token` so that a retry runs at once. False
    /// when the entry no longer carries that token.
    async fn release(
        &self,
        scope: &str,
        key: &str,
        token: &str,
        now: Timestamp,
    ) -> Result<bool, LedgerError>;

    /// Deletes entries past their retention; returns how many.
    async fn purge_expired(&self, now: Timestamp) -> Result<u64, LedgerError>;
}

/// An entry as a backend read it after its claim statement did not claim;
/// `onceq_types::ledger::Entry::judge` says what it means.
#[cfg_attr(not(any(feature = "postgres", feature = "sqlite")), allow(dead_code))]
pub(crate) type Entry = onceq_types::ledger::Entry<StoredResponse>;

impl From<onceq_types::ledger::Verdict<StoredResponse>> for ClaimOutcome {
    fn from(v: onceq_types::ledger::Verdict<StoredResponse>) -> Self {
        use onceq_types::ledger::Verdict;
        match v {
            Verdict::Mismatch => Self::Mismatch,
            Verdict::InFlight { locked_until } => Self::InFlight { locked_until },
            Verdict::Completed(r) => Self::Completed(r),
        }
    }
}

#[cfg_attr(not(any(feature = "postgres", feature = "sqlite")), allow(unused_imports))]
pub(crate) use onceq_types::ledger::{CLAIM_ATTEMPTS, PURGE_BATCH};

/// A shared ledger is a ledger, so one `Arc<dyn Ledger>` can serve the
/// layer and [`spawn_purger`](crate::idempotency::spawn_purger) alike.
#[async_trait::async_trait]
impl<L: Ledger + ?Sized> Ledger for std::sync::Arc<L> {
    async fn claim(&self, claim: &Claim, now: Timestamp) -> Result<ClaimOutcome, LedgerError> {
        (**self).claim(claim, now).await
    }

    async fn complete(
        &self,
        scope: &str,
        key: &str,
        token: &str,
        response: &StoredResponse,
        now: Timestamp,
    ) -> Result<bool, LedgerError> {
        (**self).complete(scope, key, token, response, now).await
    }

    async fn release(
        &self,
        scope: &str,
        key: &str,
        token: &str,
        now: Timestamp,
    ) -> Result<bool, LedgerError> {
        (**self).release(scope, key, token, now).await
    }

    async fn purge_expired(&self, now: Timestamp) -> Result<u64, LedgerError> {
        (**self).purge_expired(now).await
    }
}
