//! The call ledger (`ledger_*`): the `Idempotency-Key` of a mutating call,
//! claimed, answered, replayed, refused for another body, in flight,
//! taken over after its lease, released, scoped by (project, capability),
//! expired and purged, and claimed by one of many racing requests.

use std::sync::Arc;

use jiff::SignedDuration;
use onceq_store::{
    LedgerAnswer, LedgerClaim, LedgerClaimOutcome, LedgerComplete, LedgerKey, LedgerRelease,
};

use crate::Harness;

conformance!(
    ledger_claim_complete_replay,
    ledger_other_fingerprint_is_a_mismatch,
    ledger_in_flight_until_its_lease_ends,
    ledger_release_frees_the_key,
    ledger_keys_are_scoped_by_project_and_capability,
    ledger_window_expires_and_purges,
    ledger_stale_token_cannot_touch_a_newer_claim,
    ledger_purge_takes_more_than_a_batch,
);
conformance!(multi_thread ledger_one_of_racing_claims_wins);

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
                answer: answer(body),
                now: self.now,
            })
            .await
            .expect("ledger_complete")
    }

    async fn ledger_free(&self, key: &str, token: &str) -> bool {
        self.store
            .ledger_release(LedgerRelease {
                key: self.ledger_key("queue.create", key),
                token: token.to_owned(),
            })
            .await
            .expect("ledger_release")
    }
}

fn answer(body: &str) -> LedgerAnswer {
    LedgerAnswer {
        status: 200,
        body: body.as_bytes().to_vec(),
    }
}

async fn ledger_claim_complete_replay(mut h: Harness) {
    assert_eq!(
        h.ledger_take("k", 1, "t1").await,
        LedgerClaimOutcome::Claimed
    );
    assert!(h.ledger_answer("k", "t1", r#"{"ok":true}"#).await);
    h.advance(LEASE * 10);
    assert_eq!(
        h.ledger_take("k", 1, "t2").await,
        LedgerClaimOutcome::Completed(answer(r#"{"ok":true}"#)),
        "an answered key replays, long after its lease"
    );
    assert!(
        !h.ledger_answer("k", "t1", "other").await,
        "an answer is recorded once"
    );
    assert!(
        !h.ledger_free("k", "t1").await,
        "an answered key is not released"
    );
}

async fn ledger_other_fingerprint_is_a_mismatch(mut h: Harness) {
    h.ledger_take("k", 1, "t1").await;
    assert_eq!(
        h.ledger_take("k", 2, "t2").await,
        LedgerClaimOutcome::Mismatch
    );
    h.advance(LEASE + 1);
    assert_eq!(
        h.ledger_take("k", 2, "t2").await,
        LedgerClaimOutcome::Mismatch,
        "an abandoned claim is taken over only by the same request"
    );
    h.ledger_answer("k", "t1", "{}").await;
    assert_eq!(
        h.ledger_take("k", 2, "t3").await,
        LedgerClaimOutcome::Mismatch
    );
}

async fn ledger_in_flight_until_its_lease_ends(mut h: Harness) {
    h.ledger_take("k", 1, "t1").await;
    let until = h.now + SignedDuration::from_secs(LEASE);
    h.advance(LEASE - 1);
    match h.ledger_take("k", 1, "t2").await {
        LedgerClaimOutcome::InFlight { locked_until } => {
            assert_eq!(locked_until.as_microsecond(), until.as_microsecond())
        }
        other => panic!("expected InFlight, got {other:?}"),
    }
    h.advance(1);
    assert_eq!(
        h.ledger_take("k", 1, "t2").await,
        LedgerClaimOutcome::Claimed,
        "a lease that ended is taken over by a retry of the same request"
    );
    assert!(
        !h.ledger_answer("k", "t1", "{}").await,
        "the first claim lost it"
    );
    assert!(h.ledger_answer("k", "t2", "{}").await);
}

async fn ledger_release_frees_the_key(h: Harness) {
    h.ledger_take("k", 1, "t1").await;
    assert!(
        !h.ledger_free("k", "nobody").await,
        "another token releases nothing"
    );
    assert!(h.ledger_free("k", "t1").await);
    assert_eq!(
        h.ledger_take("k", 2, "t2").await,
        LedgerClaimOutcome::Claimed,
        "a released key is free, for any request"
    );
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

async fn ledger_window_expires_and_purges(mut h: Harness) {
    h.ledger_take("k", 1, "t1").await;
    h.ledger_answer("k", "t1", "{}").await;
    h.ledger_take("young", 1, "t2").await;
    h.advance(WINDOW - 1);
    assert_eq!(h.store.ledger_purge(h.now).await.unwrap(), 0);
    h.advance(1);
    assert_eq!(
        h.ledger_take("k", 2, "t3").await,
        LedgerClaimOutcome::Claimed,
        "a key past its window counts as absent"
    );
    h.advance(1);
    // "young" (claimed at 0, never answered) has expired; "k" was claimed anew.
    assert_eq!(h.store.ledger_purge(h.now).await.unwrap(), 1);
    assert_eq!(h.store.ledger_purge(h.now).await.unwrap(), 0);
}

async fn ledger_stale_token_cannot_touch_a_newer_claim(mut h: Harness) {
    h.ledger_take("k", 1, "old").await;
    h.advance(LEASE);
    assert_eq!(
        h.ledger_take("k", 1, "new").await,
        LedgerClaimOutcome::Claimed
    );
    assert!(!h.ledger_free("k", "old").await);
    assert!(!h.ledger_answer("k", "old", "{}").await);
    h.advance(1);
    assert!(matches!(
        h.ledger_take("k", 1, "third").await,
        LedgerClaimOutcome::InFlight { .. }
    ));
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

/// One purge takes every expired entry, past the backends' batch of 1000.
async fn ledger_purge_takes_more_than_a_batch(mut h: Harness) {
    for i in 0..1005 {
        h.ledger_take(&format!("k{i}"), 1, "t").await;
    }
    h.advance(WINDOW);
    assert_eq!(h.store.ledger_purge(h.now).await.unwrap(), 1005);
}
