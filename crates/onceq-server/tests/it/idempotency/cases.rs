//! The shared case table (`crates/onceq/sql/cases/ledger.json`) through
//! the server: its store's ledger (the embedded store, a fresh one per
//! case) and its own HTTP mapping (`idempotency::answer_for`), so the
//! `http` expectations — replay, 422, 409 with the exact `Retry-After` —
//! hold for the server as they do for the toolkit's layer.

use jiff::Timestamp;
use onceq_server::idempotency::answer_for;
use onceq_store::{
    LedgerAnswer, LedgerClaim, LedgerClaimOutcome, LedgerComplete, LedgerKey, LedgerRelease,
    Store,
};
use onceq_testdb::cases::ledger::{self, ClaimArgs, CompleteArgs, Http, Outcome};

struct Server {
    store: std::sync::Arc<dyn Store>,
    /// The raw outcome of the last claim, for the server's mapping.
    last: Option<LedgerClaimOutcome>,
    _dir: tempfile::TempDir,
}

fn key(scope: &str, key: &str) -> LedgerKey {
    LedgerKey {
        project: scope.to_owned(),
        capability: "queue.create".to_owned(),
        key: key.to_owned(),
    }
}

fn err(e: onceq_store::StoreError) -> String {
    e.to_string()
}

impl ledger::Driver for Server {
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

    async fn release(&mut self, scope: &str, k: &str, token: &str, _: Timestamp) -> Result<bool, String> {
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
        let res = answer_for(self.last.clone()?, "k", "queue.create", now)?;
        let header = |name: &str| res.headers().get(name).map(|v| v.to_str().unwrap().to_owned());
        Some(Http {
            status: res.status().as_u16(),
            retry_after: header("retry-after").map(|s| s.parse().unwrap()),
            replay: header("idempotent-replayed").as_deref() == Some("true"),
        })
    }
}

#[tokio::test]
async fn ledger_cases_through_the_servers_mapping() {
    let checked = ledger::run(|| async {
        let dir = tempfile::tempdir().unwrap();
        let store = onceq_store::open(None, dir.path()).await.unwrap();
        Server {
            store,
            last: None,
            _dir: dir,
        }
    })
    .await;
    assert!(checked > 0, "the http expectations ran");
}
