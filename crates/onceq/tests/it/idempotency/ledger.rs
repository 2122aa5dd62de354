//! The `Ledger` contract, called directly on both backends: a request whose
//! lease was taken over can neither record over nor delete its successor's
//! entry.

use bytes::Bytes;
use http::{HeaderMap, StatusCode};
use jiff::{SignedDuration, Timestamp};
use onceq::idempotency::{Claim, ClaimOutcome, Fingerprint, StoredResponse};

use super::{
    app::{Backend, TestApp},
    on_both_ledgers,
};

on_both_ledgers!(stale_claims_cannot_complete_or_release);

fn claim(token: &str, now: Timestamp) -> Claim {
    Claim {
        scope: "1:a POST /x".into(),
        key: "k".into(),
        fingerprint: Fingerprint::of_parts(b"req"),
        token: token.into(),
        locked_until: now + SignedDuration::from_secs(30),
        expires_at: now + SignedDuration::from_hours(24),
    }
}

async fn stale_claims_cannot_complete_or_release(b: Backend) {
    let app = TestApp::start(b).await;
    let l = &app.ledger;
    let t0 = app.env.clock.now();
    let answer = StoredResponse::new(
        StatusCode::CREATED,
        HeaderMap::new(),
        Bytes::from_static(b"{}"),
    );

    assert!(matches!(
        l.claim(&claim("old", t0), t0).await.unwrap(),
        ClaimOutcome::Claimed
    ));
    let t1 = t0 + SignedDuration::from_secs(31);
    assert!(matches!(
        l.claim(&claim("new", t1), t1).await.unwrap(),
        ClaimOutcome::Claimed
    ));

    // The first holder wakes up late: fenced off by its token.
    assert!(
        !l.complete("1:a POST /x", "k", "old", &answer, t1)
            .await
            .unwrap()
    );
    assert!(!l.release("1:a POST /x", "k", "old", t1).await.unwrap());
    match l.claim(&claim("third", t1), t1).await.unwrap() {
        ClaimOutcome::InFlight { locked_until } => {
            assert_eq!(locked_until, t1 + SignedDuration::from_secs(30))
        }
        other => panic!("the new holder's claim must stand: {other:?}"),
    }

    assert!(
        l.complete("1:a POST /x", "k", "new", &answer, t1)
            .await
            .unwrap()
    );
    match l.claim(&claim("fourth", t1), t1).await.unwrap() {
        ClaimOutcome::Completed(r) => assert_eq!(r, answer),
        other => panic!("{other:?}"),
    }
    // A recorded answer is not released by anyone.
    assert!(!l.release("1:a POST /x", "k", "new", t1).await.unwrap());
}
