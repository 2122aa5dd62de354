//! The call ledger (`ledger_*`): the shared case table
//! (`crates/onceq/sql/cases/ledger.json`: claim, replay, mismatch, in
//! flight, takeover, fenced completion, release, expiry, scopes, purge) on
//! both backends, plus what is the server's own: keys scoped by (project,
//! capability), and one of many racing claims winning.

use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use onceq_store::{
    LedgerAnswer, LedgerClaim, LedgerClaimOutcome, LedgerComplete, LedgerKey, LedgerRelease,
};
use onceq_testdb::cases::ledger::{self as cases, ClaimArgs, CompleteArgs, Outcome};

use crate::Harness;

conformance!(ledger_keys_are_scoped_by_project_and_capability);
conformance!(multi_thread ledger_one_of_racing_claims_wins);

/// The case table: each case on a fresh store of the backend.
mod ledger_cases {
    #[tokio::test]
    async fn sqlite() {
        onceq_testdb::cases::ledger::run(|| async { super::Cases(crate::Harness::sqlite().await) })
            .await;
    }
    #[tokio::test]
    async fn postgres() {
        onceq_testdb::cases::ledger::run(|| async {
            super::Cases(crate::Harness::postgres().await)
        })
        .await;
    }
}

/// A case's scope is the project; the capability is fixed (scopes by
/// capability are [`ledger_keys_are_scoped_by_project_and_capability`]'s).
struct Cases(Harness);

fn case_key(scope: &str, key: &str) -> LedgerKey {
    LedgerKey {
        project: scope.to_owned(),
        capability: "queue.create".to_owned(),
        key: key.to_owned(),
    }
}

fn store_err(e: onceq_store::StoreError) -> String {
    e.to_string()
}

impl cases::Driver for Cases {
    async fn claim(&mut self, c: &ClaimArgs) -> Result<Outcome, String> {
        let claim = LedgerClaim {
            key: case_key(&c.scope, &c.key),
            fingerprint: c.fingerprint,
            token: c.token.clone(),
            locked_until: c.locked_until,
            expires_at: c.expires_at,
            now: c.now,
        };
        Ok(match self.0.store.ledger_claim(claim).await.map_err(store_err)? {
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
            key: case_key(&c.scope, &c.key),
            token: c.token.clone(),
            answer: LedgerAnswer {
                status: c.status,
                headers: c.headers.clone(),
                body: c.body.clone(),
            },
            now: c.now,
        };
        self.0.store.ledger_complete(complete).await.map_err(store_err)
    }

    async fn release(
        &mut self,
        scope: &str,
        key: &str,
        token: &str,
        _now: Timestamp,
    ) -> Result<bool, String> {
        let release = LedgerRelease {
            key: case_key(scope, key),
            token: token.to_owned(),
        };
        self.0.store.ledger_release(release).await.map_err(store_err)
    }

    async fn purge(&mut self, now: Timestamp, limit: i64) -> Result<u64, String> {
        let limit = u32::try_from(limit).map_err(|e| e.to_string())?;
        self.0.store.ledger_purge(now, limit).await.map_err(store_err)
    }
}

const LEASE: i64 = 30;
const WINDOW: i64 = 86_400;

impl Harness {
    fn ledger_key(&self, capability: &str, key: &str) -> LedgerKey {
        LedgerKey {
            project: self.project.clone(),
            capability: capability.to_owned(),
            key: key.to_owned(),
        }
    }

    fn ledger_claim_of(&self, key: LedgerKey, fingerprint: u8, token: &str) -> LedgerClaim {
        LedgerClaim {
            key,
            fingerprint: [fingerprint; 32],
            token: token.to_owned(),
            locked_until: self.now + SignedDuration::from_secs(LEASE),
            expires_at: self.now + SignedDuration::from_secs(WINDOW),
            now: self.now,
        }
    }

    async fn ledger_take(&self, key: &str, fingerprint: u8, token: &str) -> LedgerClaimOutcome {
        let claim = self.ledger_claim_of(self.ledger_key("queue.create", key), fingerprint, token);
        self.store.ledger_claim(claim).await.expect("ledger_claim")
    }

    async fn ledger_answer(&self, key: &str, token: &str, body: &str) -> bool {
        self.store
            .ledger_complete(LedgerComplete {
                key: self.ledger_key("queue.create", key),
                token: token.to_owned(),
                answer: LedgerAnswer {
                    status: 200,
                    headers: Vec::new(),
                    body: body.as_bytes().to_vec(),
                },
                now: self.now,
            })
            .await
            .expect("ledger_complete")
    }
}

async fn ledger_keys_are_scoped_by_project_and_capability(h: Harness) {
    h.ledger_take("k", 1, "t1").await;
    h.ledger_answer("k", "t1", "{}").await;
    let other_capability = h.ledger_claim_of(h.ledger_key("queue.purge", "k"), 2, "t2");
    assert_eq!(
        h.store.ledger_claim(other_capability).await.unwrap(),
        LedgerClaimOutcome::Claimed
    );
    let other = h.as_project("other-project").await;
    assert_eq!(
        other.ledger_take("k", 2, "t3").await,
        LedgerClaimOutcome::Claimed
    );
}

async fn ledger_one_of_racing_claims_wins(h: Harness) {
    let h = Arc::new(h);
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let h = h.clone();
            tokio::spawn(async move { h.ledger_take("race", 1, &format!("t{i}")).await })
        })
        .collect();
    let mut claimed = 0;
    for t in tasks {
        match t.await.unwrap() {
            LedgerClaimOutcome::Claimed => claimed += 1,
            LedgerClaimOutcome::InFlight { .. } => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(claimed, 1);
}
