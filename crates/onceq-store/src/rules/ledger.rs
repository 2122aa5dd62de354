//! The call ledger is the shared request ledger: the table, the
//! statements (`crates/onceq/sql/ledger/<dialect>/`) and the judge
//! (`onceq_types::ledger`) are the toolkit's, run unchanged by both
//! backends. What is the server's own is written here, once for both: how
//! a (project, capability) pair becomes a scope, and the headers' column
//! form.

use onceq_types::ledger::Verdict;

use crate::{LedgerAnswer, LedgerClaimOutcome, LedgerKey, StoreError};

pub(crate) use onceq_types::ledger::{CLAIM_ATTEMPTS, Entry};

/// The entry's scope: `server:<bytes of project>:<project> <capability>`.
/// The length prefix keeps any two pairs apart (a project may hold a
/// space); `server:` keeps them apart from the toolkit's scopes (which
/// begin with a digit) when both share a database; and a project's entries
/// are the scopes beginning with [`project_prefix`]. Migration V16
/// (`ledger_adopt.sql`) builds the same form in SQL, and V19's counters
/// read the project back out of it (per-project bounds).
pub(crate) fn scope(k: &LedgerKey) -> String {
    format!("{}{}", project_prefix(&k.project), k.capability)
}

/// What every scope of `project` begins with.
pub(crate) fn project_prefix(project: &str) -> String {
    format!("server:{}:{project} ", project.len())
}

/// The headers column: a JSON array of `[name, value]` pairs.
pub(crate) fn headers_json(a: &LedgerAnswer) -> String {
    serde_json::to_string(&a.headers).unwrap_or_else(|_| "[]".to_owned())
}

/// Reads the headers column back.
pub(crate) fn headers_from_json(json: Option<&str>) -> Result<Vec<(String, String)>, StoreError> {
    serde_json::from_str(json.unwrap_or("[]"))
        .map_err(|e| StoreError::internal(format!("a ledger entry's headers: {e}")))
}

/// The judge's verdict as the store answers it.
pub(crate) fn outcome(v: Verdict<LedgerAnswer>) -> LedgerClaimOutcome {
    match v {
        Verdict::Mismatch => LedgerClaimOutcome::Mismatch,
        Verdict::InFlight { locked_until } => LedgerClaimOutcome::InFlight { locked_until },
        Verdict::Completed(a) => LedgerClaimOutcome::Completed(a),
    }
}

/// A claim that found no decidable entry in [`CLAIM_ATTEMPTS`] tries.
pub(crate) fn contended() -> StoreError {
    StoreError::Unavailable("the idempotency key kept changing under its claim".into())
}

/// What migration V16 must keep, for both backends' tests: each writes two
/// V13 rows — ('a b', 'queue.create', 'done'), answered 200 `{"ok":true}`
/// with fingerprint `[1; 32]`, and ('p', 'queue.nack', 'busy'), in flight
/// until second 1030 with `[2; 32]` — migrates, and calls this.
#[cfg(test)]
pub(crate) async fn check_v16_rows(store: &dyn crate::Store) {
    use crate::LedgerClaim;
    use jiff::{SignedDuration, Timestamp};

    let t = |s| Timestamp::from_second(s).unwrap();
    let claim = |project: &str, capability: &str, key: &str, fp: u8, now| LedgerClaim {
        key: LedgerKey {
            project: project.into(),
            capability: capability.into(),
            key: key.into(),
        },
        fingerprint: [fp; 32],
        token: "new".into(),
        locked_until: t(now) + SignedDuration::from_secs(30),
        expires_at: t(now) + SignedDuration::from_hours(24),
        now: t(now),
    };
    let outcome = |c| async { store.ledger_claim(c).await.unwrap() };
    assert_eq!(
        outcome(claim("a b", "queue.create", "done", 1, 1002)).await,
        LedgerClaimOutcome::Completed(LedgerAnswer {
            status: 200,
            headers: Vec::new(),
            body: br#"{"ok":true}"#.to_vec(),
        })
    );
    assert_eq!(
        outcome(claim("a b", "queue.create", "done", 9, 1002)).await,
        LedgerClaimOutcome::Mismatch
    );
    assert_eq!(
        outcome(claim("p", "queue.nack", "busy", 2, 1010)).await,
        LedgerClaimOutcome::InFlight {
            locked_until: t(1030)
        }
    );
    // The scope still tells projects and capabilities apart.
    assert_eq!(
        outcome(claim("a", "b queue.create", "done", 1, 1002)).await,
        LedgerClaimOutcome::Claimed
    );
}

/// What migration V19 must count, for both backends' tests: each writes,
/// before it, four request-ledger rows — project 'a b': an answer of 11
/// bytes (queue.ack 'k1', fingerprint `[1; 32]`) and a claim in flight
/// (queue.nack 'k2', `[2; 32]`); project 'p': an answer of 3 bytes
/// (queue.ack 'k1', `[3; 32]`); and a toolkit scope's answer
/// (`1:toolkit GET /x`, 'k', 4 bytes) — all ending at second 90 000,
/// migrates, and calls this.
#[cfg(test)]
pub(crate) async fn check_v19_counts(store: &dyn crate::Store) {
    use crate::{LedgerClaim, LedgerUsage};
    use jiff::{SignedDuration, Timestamp};

    let usage = |project: &'static str| async move { store.ledger_usage(project).await.unwrap() };
    let kept = |entries, bytes| LedgerUsage { entries, bytes };
    assert_eq!(usage("a b").await, kept(2, 11));
    assert_eq!(usage("p").await, kept(1, 3));
    assert_eq!(
        usage("1:toolkit").await,
        kept(0, 0),
        "the toolkit's rows are not a project's"
    );
    let t = |s| Timestamp::from_second(s).unwrap();
    assert_eq!(
        store.ledger_first_expiry("a b", t(2000)).await.unwrap(),
        Some(t(90_000))
    );
    // And the triggers count what comes after.
    let claim = LedgerClaim {
        key: LedgerKey {
            project: "a b".into(),
            capability: "queue.ack".into(),
            key: "k3".into(),
        },
        fingerprint: [5; 32],
        token: "t".into(),
        locked_until: t(2000) + SignedDuration::from_secs(30),
        expires_at: t(2000) + SignedDuration::from_hours(24),
        now: t(2000),
    };
    assert_eq!(
        store.ledger_claim(claim).await.unwrap(),
        LedgerClaimOutcome::Claimed
    );
    assert_eq!(usage("a b").await, kept(3, 11));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(project: &str, capability: &str) -> LedgerKey {
        LedgerKey {
            project: project.into(),
            capability: capability.into(),
            key: "k".into(),
        }
    }

    #[test]
    fn scopes_do_not_collide_and_keep_the_project_a_prefix() {
        assert_ne!(scope(&key("a b", "c")), scope(&key("a", "b c")));
        assert_eq!(
            scope(&key("proj-a", "queue.create")),
            "server:6:proj-a queue.create"
        );
        assert!(scope(&key("proj-a", "queue.nack")).starts_with(&project_prefix("proj-a")));
        assert!(!scope(&key("proj-ab", "queue.nack")).starts_with(&project_prefix("proj-a")));
    }
}
