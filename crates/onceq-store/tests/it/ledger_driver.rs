//! The case table's driver over a `Store`'s ledger methods, shared by the
//! two runners that go through a store: this suite (both backends) and the
//! server's HTTP mapping (`onceq-server/tests/it/idempotency/cases.rs`
//! includes this file). A case's scope is the project; the capability is
//! fixed (scopes by capability are `ledger_keys_are_scoped_by_project_and_capability`'s).

use std::sync::Arc;

use jiff::Timestamp;
use onceq_store::{
    LedgerAnswer, LedgerClaim, LedgerClaimOutcome, LedgerComplete, LedgerKey, LedgerRelease, Store,
    StoreError,
};
use onceq_testdb::cases::ledger::{ClaimArgs, CompleteArgs, Driver, Http, Outcome};

/// What a runner's HTTP layer answers for a claim's outcome at a time.
pub type Mapping = fn(LedgerClaimOutcome, Timestamp) -> Option<Http>;

/// A store under the case table.
pub struct StoreCases {
    store: Arc<dyn Store>,
    http: Option<Mapping>,
    /// The raw outcome of the last claim, for `http`.
    last: Option<LedgerClaimOutcome>,
    /// Whatever keeps the store's data alive.
    _keep: Box<dyn std::any::Any>,
}

impl StoreCases {
    /// `store`, kept alive by `keep`, mapped to HTTP by `http` if given.
    pub fn new(store: Arc<dyn Store>, keep: impl std::any::Any, http: Option<Mapping>) -> Self {
        Self {
            store,
            http,
            last: None,
            _keep: Box::new(keep),
        }
    }
}

fn key(scope: &str, key: &str) -> LedgerKey {
    LedgerKey {
        project: scope.to_owned(),
        capability: "queue.create".to_owned(),
        key: key.to_owned(),
    }
}

fn err(e: StoreError) -> String {
    e.to_string()
}

impl Driver for StoreCases {
    async fn claim(&mut self, c: &ClaimArgs) -> Result<Outcome, String> {
        let claim = LedgerClaim {
            key: key(&c.scope, &c.key),
            fingerprint: c.fingerprint,
            token: c.token.clone(),
            locked_until: c.locked_until,
            expires_at: c.expires_at,
            now: c.now,
        };
        let got = self.store.ledger_claim(claim).await.map_err(err)?;
        self.last = Some(got.clone());
        Ok(match got {
            LedgerClaimOutcome::Claimed => Outcome::Claimed,
            LedgerClaimOutcome::Mismatch => Outcome::Mismatch,
            LedgerClaimOutcome::InFlight { locked_until } => Outcome::InFlight { locked_until },
            LedgerClaimOutcome::Completed(a) => Outcome::Completed {
                status: a.status,
                headers: a.headers,
                body: a.body,
            },
        })
    }

    async fn complete(&mut self, c: &CompleteArgs) -> Result<bool, String> {
        let complete = LedgerComplete {
            key: key(&c.scope, &c.key),
            token: c.token.clone(),
            answer: LedgerAnswer {
                status: c.status,
                headers: c.headers.clone(),
                body: c.body.clone(),
            },
            now: c.now,
        };
        self.store.ledger_complete(complete).await.map_err(err)
    }

    async fn release(
        &mut self,
        scope: &str,
        k: &str,
        token: &str,
        _: Timestamp,
    ) -> Result<bool, String> {
        let release = LedgerRelease {
            key: key(scope, k),
            token: token.to_owned(),
        };
        self.store.ledger_release(release).await.map_err(err)
    }

    async fn purge(&mut self, now: Timestamp, limit: i64) -> Result<u64, String> {
        let limit = u32::try_from(limit).map_err(|e| e.to_string())?;
        self.store.ledger_purge(now, limit).await.map_err(err)
    }

    fn http(&self, _: &Outcome, now: Timestamp) -> Option<Http> {
        (self.http?)(self.last.clone()?, now)
    }
}
