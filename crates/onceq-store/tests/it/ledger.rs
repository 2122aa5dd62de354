//! The call ledger (`ledger_*`): the shared case table
//! (`crates/onceq/sql/cases/ledger.json`: claim, replay, mismatch, in
//! flight, takeover, fenced completion, release, expiry, scopes, purge) on
//! both backends, plus what is the server's own: keys scoped by (project,
//! capability), and one of many racing claims winning.

use std::sync::Arc;

use jiff::SignedDuration;
use onceq_store::{LedgerAnswer, LedgerClaim, LedgerClaimOutcome, LedgerComplete, LedgerKey};

use crate::Harness;

conformance!(ledger_keys_are_scoped_by_project_and_capability);
conformance!(multi_thread ledger_one_of_racing_claims_wins);

/// The case table: each case on a fresh store of the backend.
mod ledger_cases {
    use crate::{Harness, ledger_driver::StoreCases};

    #[tokio::test]
    async fn sqlite() {
        onceq_testdb::cases::ledger::run(|| async {
            let h = Harness::sqlite().await;
            StoreCases::new(h.store.clone(), h, None)
        })
        .await;
    }
    #[tokio::test]
    async fn postgres() {
        onceq_testdb::cases::ledger::run(|| async {
            let h = Harness::postgres().await;
            StoreCases::new(h.store.clone(), h, None)
        })
        .await;
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
