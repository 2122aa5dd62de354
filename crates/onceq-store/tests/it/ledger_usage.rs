//! The call ledger's usage counters (`ledger_usage`, migration V19): every
//! change to an entry — a claim, an answer, a release, a takeover, a purge
//! — moves them in its own transaction, so they stay exactly what a
//! recount of the entries finds, with claims racing on several stores of
//! one database too; and `ledger_first_expiry` finds a project's first
//! live entry.

use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use onceq_store::{
    LedgerAnswer, LedgerClaim, LedgerClaimOutcome, LedgerComplete, LedgerKey, LedgerRelease,
    LedgerUsage, Store,
};

use crate::Harness;

conformance!(
    ledger_usage_counts_claims_answers_and_releases,
    ledger_usage_follows_takeovers,
    ledger_usage_drops_what_is_purged,
    ledger_first_expiry_is_the_first_live_entry,
    ledger_usage_matches_a_recount_after_a_mixed_sequence,
);
conformance!(
    multi_thread ledger_usage_stays_exact_under_concurrent_claims,
    ledger_usage_stays_exact_under_concurrent_purges,
);

const LEASE: i64 = 30;
const WINDOW: i64 = 86_400;

fn key(project: &str, capability: &str, key: &str) -> LedgerKey {
    LedgerKey {
        project: project.to_owned(),
        capability: capability.to_owned(),
        key: key.to_owned(),
    }
}

async fn claim_on(
    store: &dyn Store,
    project: &str,
    now: Timestamp,
    (capability, k): (&str, &str),
    fingerprint: u8,
    token: &str,
) -> LedgerClaimOutcome {
    store
        .ledger_claim(LedgerClaim {
            key: key(project, capability, k),
            fingerprint: [fingerprint; 32],
            token: token.to_owned(),
            locked_until: now + SignedDuration::from_secs(LEASE),
            expires_at: now + SignedDuration::from_secs(WINDOW),
            now,
        })
        .await
        .expect("ledger_claim")
}

async fn answer_on(
    store: &dyn Store,
    project: &str,
    now: Timestamp,
    (capability, k): (&str, &str),
    token: &str,
    body_len: usize,
) -> bool {
    store
        .ledger_complete(LedgerComplete {
            key: key(project, capability, k),
            token: token.to_owned(),
            answer: LedgerAnswer {
                status: 200,
                headers: Vec::new(),
                body: vec![b'x'; body_len],
            },
            now,
        })
        .await
        .expect("ledger_complete")
}

async fn release_on(
    store: &dyn Store,
    project: &str,
    (capability, k): (&str, &str),
    token: &str,
) -> bool {
    store
        .ledger_release(LedgerRelease {
            key: key(project, capability, k),
            token: token.to_owned(),
        })
        .await
        .expect("ledger_release")
}

impl Harness {
    async fn claim_key(&self, k: &str, fingerprint: u8, token: &str) -> LedgerClaimOutcome {
        let at = ("queue.ack", k);
        claim_on(
            &*self.store,
            &self.project,
            self.now,
            at,
            fingerprint,
            token,
        )
        .await
    }

    async fn answer_key(&self, k: &str, token: &str, body_len: usize) -> bool {
        let at = ("queue.ack", k);
        answer_on(&*self.store, &self.project, self.now, at, token, body_len).await
    }

    async fn release_key(&self, k: &str, token: &str) -> bool {
        release_on(&*self.store, &self.project, ("queue.ack", k), token).await
    }

    async fn usage(&self) -> (u64, u64) {
        let u: LedgerUsage = self
            .store
            .ledger_usage(&self.project)
            .await
            .expect("ledger_usage");
        (u.entries, u.bytes)
    }

    /// The project's entries and answer bytes, counted from the rows.
    async fn recount(&self) -> (u64, u64) {
        let prefix = format!("server:{}:{} ", self.project.len(), self.project);
        if let Some(url) = self.postgres_url() {
            let row = onceq_testdb::connect(url)
                .await
                .query_one(
                    "SELECT count(*), coalesce(sum(octet_length(body)), 0)::bigint
                     FROM onceq_request_ledger WHERE starts_with(scope, $1)",
                    &[&prefix],
                )
                .await
                .expect("recount");
            let n = |i| u64::try_from(row.get::<_, i64>(i)).unwrap();
            return (n(0), n(1));
        }
        let dir = self.sqlite_dir().expect("a sqlite harness");
        let conn = rusqlite::Connection::open(dir.join(onceq_store::sqlite::DB_FILE))
            .expect("open for the recount");
        let (entries, bytes): (i64, i64) = conn
            .query_row(
                "SELECT count(*), coalesce(sum(length(body)), 0)
                 FROM onceq_request_ledger WHERE instr(scope, ?1) = 1",
                [&prefix],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .expect("recount");
        (entries as u64, bytes as u64)
    }

    async fn purge_ledger(&self) -> u64 {
        self.store
            .ledger_purge(self.now, 1000)
            .await
            .expect("ledger_purge")
    }
}

async fn ledger_usage_counts_claims_answers_and_releases(h: Harness) {
    assert_eq!(h.usage().await, (0, 0), "a project that keeps nothing");
    assert_eq!(h.claim_key("a", 1, "ta").await, LedgerClaimOutcome::Claimed);
    assert_eq!(h.usage().await, (1, 0), "a claim in flight counts");
    assert!(h.answer_key("a", "ta", 11).await);
    assert_eq!(h.usage().await, (1, 11), "its answer's bytes");
    // A replay and a mismatch change nothing.
    assert!(matches!(
        h.claim_key("a", 1, "tx").await,
        LedgerClaimOutcome::Completed(_)
    ));
    assert_eq!(
        h.claim_key("a", 2, "ty").await,
        LedgerClaimOutcome::Mismatch
    );
    // A fenced answer (wrong token) changes nothing either.
    assert!(!h.answer_key("a", "tx", 500).await);
    assert_eq!(h.usage().await, (1, 11));
    h.claim_key("b", 3, "tb").await;
    assert_eq!(h.usage().await, (2, 11));
    assert!(h.release_key("b", "tb").await);
    assert_eq!(h.usage().await, (1, 11), "a released claim keeps nothing");
    assert!(
        !h.release_key("a", "ta").await,
        "an answered entry is not released"
    );
    assert_eq!(h.usage().await, (1, 11));
    // Another capability of the project counts; another project is apart.
    let other_capability = ("queue.cancel", "a");
    claim_on(&*h.store, &h.project, h.now, other_capability, 4, "tc").await;
    answer_on(&*h.store, &h.project, h.now, other_capability, "tc", 5).await;
    assert_eq!(h.usage().await, (2, 16));
    let other = h.as_project("proj a b").await;
    other.claim_key("a", 1, "to").await;
    other.answer_key("a", "to", 100).await;
    assert_eq!(other.usage().await, (1, 100));
    assert_eq!(h.usage().await, (2, 16));
    assert_eq!(h.usage().await, h.recount().await);
    assert_eq!(other.usage().await, other.recount().await);
}

async fn ledger_usage_follows_takeovers(mut h: Harness) {
    h.claim_key("k", 1, "t1").await;
    h.answer_key("k", "t1", 50).await;
    assert_eq!(h.usage().await, (1, 50));
    // Past its window the entry counts as absent: a new request takes it
    // over, in place, and its old answer goes.
    h.advance(WINDOW + 1);
    assert_eq!(h.claim_key("k", 2, "t2").await, LedgerClaimOutcome::Claimed);
    assert_eq!(h.usage().await, (1, 0));
    h.answer_key("k", "t2", 7).await;
    assert_eq!(h.usage().await, (1, 7));
    // An abandoned claim taken over by its own retry stays one entry.
    h.claim_key("j", 3, "t3").await;
    h.advance(LEASE + 1);
    assert_eq!(h.claim_key("j", 3, "t4").await, LedgerClaimOutcome::Claimed);
    assert_eq!(h.usage().await, (2, 7));
    assert!(!h.release_key("j", "t3").await, "the first claim is fenced");
    assert!(h.release_key("j", "t4").await);
    assert_eq!(h.usage().await, (1, 7));
    assert_eq!(h.usage().await, h.recount().await);
}

async fn ledger_usage_drops_what_is_purged(mut h: Harness) {
    for i in 0..5u8 {
        let k = format!("old-{i}");
        h.claim_key(&k, i, "t").await;
        h.answer_key(&k, "t", 10).await;
    }
    h.advance(3600);
    for i in 0..3u8 {
        let k = format!("new-{i}");
        h.claim_key(&k, 100 + i, "t").await;
        h.answer_key(&k, "t", 1).await;
    }
    h.claim_key("in-flight", 200, "t").await;
    assert_eq!(h.usage().await, (9, 53));
    // The first five's window ends; the purge takes them (and only them).
    h.advance(WINDOW - 3600);
    assert_eq!(h.purge_ledger().await, 5);
    assert_eq!(h.usage().await, (4, 3));
    h.advance(3600);
    assert_eq!(h.purge_ledger().await, 4);
    assert_eq!(h.usage().await, (0, 0));
    assert_eq!(h.usage().await, h.recount().await);
}

async fn ledger_first_expiry_is_the_first_live_entry(mut h: Harness) {
    let first = |h: &Harness| {
        let (store, project, now) = (h.store.clone(), h.project.clone(), h.now);
        async move { store.ledger_first_expiry(&project, now).await.unwrap() }
    };
    assert_eq!(first(&h).await, None);
    h.claim_key("a", 1, "t").await;
    h.answer_key("a", "t", 3).await;
    h.advance(100);
    h.claim_key("b", 2, "t").await;
    assert_eq!(first(&h).await, Some(h.t(WINDOW)));
    let other = h.as_project("proj-ab").await;
    assert_eq!(
        first(&other).await,
        None,
        "another project's entries are apart"
    );
    // Past the first's window (not yet purged) the next one is first.
    h.advance(WINDOW - 100);
    assert_eq!(first(&h).await, Some(h.t(100 + WINDOW)));
    h.advance(100);
    assert_eq!(first(&h).await, None, "none is live");
}

/// A deterministic mix of every change, on two projects and two
/// capabilities, checked against a recount as it goes.
async fn ledger_usage_matches_a_recount_after_a_mixed_sequence(mut h: Harness) {
    let other = h.as_project("p 2").await;
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: u64| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        (seed >> 33) % n
    };
    for step in 0..400u32 {
        let project = match next(3) {
            0 => other.project.clone(),
            _ => h.project.clone(),
        };
        let project = project.as_str();
        let capability = if next(2) == 0 {
            "queue.ack"
        } else {
            "queue.nack"
        };
        let k = format!("k{}", next(24));
        let at = (capability, k.as_str());
        let fingerprint = next(3) as u8;
        let token = format!("t{step}");
        match next(10) {
            0..=4 => {
                if claim_on(&*h.store, project, h.now, at, fingerprint, &token).await
                    == LedgerClaimOutcome::Claimed
                {
                    match next(4) {
                        0 => {
                            release_on(&*h.store, project, at, &token).await;
                        }
                        1 => {} // left in flight
                        _ => {
                            let len = next(2000) as usize;
                            answer_on(&*h.store, project, h.now, at, &token, len).await;
                        }
                    }
                }
            }
            5..=7 => h.advance(next(2 * LEASE as u64) as i64),
            8 => h.advance(next(WINDOW as u64 / 4) as i64),
            _ => {
                h.purge_ledger().await;
            }
        }
        if step % 50 == 49 {
            assert_eq!(h.usage().await, h.recount().await, "step {step}");
            assert_eq!(other.usage().await, other.recount().await, "step {step}");
        }
    }
    assert_ne!(h.usage().await, (0, 0), "the mix kept something");
}

/// Many claims of one project at once (on PostgreSQL, from two stores on
/// one database, as two servers): no update is lost.
async fn ledger_usage_stays_exact_under_concurrent_claims(h: Harness) {
    let second: Arc<dyn Store> = match h.postgres_url() {
        Some(url) => Arc::new(
            onceq_store::postgres::PgStore::connect(url)
                .await
                .expect("a second store"),
        ),
        None => h.store.clone(),
    };
    let stores = [h.store.clone(), second];
    let tasks: Vec<_> = (0..64usize)
        .map(|i| {
            let store = stores[i % 2].clone();
            let (project, now) = (h.project.clone(), h.now);
            tokio::spawn(async move {
                let k = format!("k{i}");
                let at = ("queue.ack", k.as_str());
                let fingerprint = i as u8;
                let outcome = claim_on(&*store, &project, now, at, fingerprint, "t").await;
                assert_eq!(outcome, LedgerClaimOutcome::Claimed);
                match i % 3 {
                    0 => assert!(release_on(&*store, &project, at, "t").await),
                    _ => assert!(answer_on(&*store, &project, now, at, "t", i).await),
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let kept = (0..64).filter(|i| i % 3 != 0);
    let expected = (kept.clone().count() as u64, kept.map(|i| i as u64).sum());
    assert_eq!(h.usage().await, expected);
    assert_eq!(h.recount().await, expected);
}

/// Purges of many projects' entries at once (on PostgreSQL from two stores,
/// as two servers' purgers) all succeed and leave every counter exact:
/// each purge updates the counters it touches in one order, so two never
/// wait on each other in a cycle.
async fn ledger_usage_stays_exact_under_concurrent_purges(mut h: Harness) {
    let second: Arc<dyn Store> = match h.postgres_url() {
        Some(url) => Arc::new(
            onceq_store::postgres::PgStore::connect(url)
                .await
                .expect("a second store"),
        ),
        None => h.store.clone(),
    };
    let projects: Vec<String> = (0..12).map(|p| format!("purged-{p}")).collect();
    // Interleaved, so each purge batch (by expiry) spans many projects.
    for i in 0..240usize {
        let project = &projects[i % projects.len()];
        let k = format!("k{i}");
        let at = ("queue.ack", k.as_str());
        claim_on(&*h.store, project, h.now, at, i as u8, "t").await;
        answer_on(&*h.store, project, h.now, at, "t", 3).await;
    }
    h.claim_key("expires-with-them", 1, "t").await;
    h.advance(WINDOW / 2);
    h.claim_key("live", 2, "t").await;
    h.advance(WINDOW / 2);
    let stores = [h.store.clone(), second];
    let purges: Vec<_> = (0..8usize)
        .map(|i| {
            let (store, now) = (stores[i % 2].clone(), h.now);
            tokio::spawn(async move {
                let mut total = 0;
                loop {
                    let n = store.ledger_purge(now, 7).await.expect("ledger_purge");
                    total += n;
                    if n == 0 {
                        return total;
                    }
                }
            })
        })
        .collect();
    let mut purged = 0;
    for p in purges {
        purged += p.await.unwrap();
    }
    assert_eq!(purged, 241, "every expired entry once, the live one kept");
    for project in &projects {
        let u = h.store.ledger_usage(project).await.unwrap();
        assert_eq!((u.entries, u.bytes), (0, 0), "{project}");
    }
    assert_eq!(h.usage().await, (1, 0));
    assert_eq!(h.usage().await, h.recount().await);
}
