//! The call ledger's one decision, written once for both backends: what an
//! entry a claim statement did not take means for the claim. Mirrors the
//! toolkit's `onceq::idempotency` ledger (the same states; see
//! docs/state-machines.md).

use jiff::Timestamp;

use crate::{LedgerAnswer, LedgerClaimOutcome};

/// How often a backend retries claim + read when the entry keeps changing
/// under it (each retry means another request won a race).
pub(crate) const CLAIM_ATTEMPTS: usize = 4;

/// Rows one purge statement deletes at most (either backend).
pub(crate) const PURGE_BATCH: i64 = 1000;

/// An entry as read after the claim statement returned no row.
#[derive(Debug)]
pub(crate) struct Entry {
    pub fingerprint: Vec<u8>,
    pub answer: Option<LedgerAnswer>,
    pub locked_until: Option<Timestamp>,
    pub expires_at: Timestamp,
}

impl Entry {
    /// What the entry means for a claim of `fingerprint` at `now`; `None`
    /// when it changed between the claim statement and the read (expired,
    /// lease ended, deleted) and the claim should be tried again.
    pub(crate) fn judge(
        self,
        fingerprint: &[u8; 32],
        now: Timestamp,
    ) -> Option<LedgerClaimOutcome> {
        if self.expires_at <= now {
            return None;
        }
        if self.fingerprint != fingerprint {
            return Some(LedgerClaimOutcome::Mismatch);
        }
        match (self.answer, self.locked_until) {
            (Some(a), _) => Some(LedgerClaimOutcome::Completed(a)),
            (None, Some(until)) if until > now => Some(LedgerClaimOutcome::InFlight {
                locked_until: until,
            }),
            (None, _) => None,
        }
    }
}

/// A claim that found no decidable entry in [`CLAIM_ATTEMPTS`] tries.
pub(crate) fn contended() -> crate::StoreError {
    crate::StoreError::Unavailable("the idempotency key kept changing under its claim".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> Timestamp {
        Timestamp::from_second(s).unwrap()
    }

    fn entry(fp: [u8; 32], done: bool, locked: i64, expires: i64) -> Entry {
        Entry {
            fingerprint: fp.to_vec(),
            answer: done.then(|| LedgerAnswer {
                status: 200,
                body: b"{}".to_vec(),
            }),
            locked_until: (!done).then(|| t(locked)),
            expires_at: t(expires),
        }
    }

    #[test]
    fn judges_like_the_state_machine() {
        let (fp, other, now) = ([1; 32], [2; 32], t(100));
        assert!(matches!(
            entry(fp, false, 130, 999).judge(&fp, now),
            Some(LedgerClaimOutcome::InFlight { .. })
        ));
        assert!(entry(fp, false, 100, 999).judge(&fp, now).is_none());
        assert!(matches!(
            entry(fp, true, 0, 999).judge(&fp, now),
            Some(LedgerClaimOutcome::Completed(_))
        ));
        assert_eq!(
            entry(other, true, 0, 999).judge(&fp, now),
            Some(LedgerClaimOutcome::Mismatch)
        );
        assert!(entry(other, true, 0, 100).judge(&fp, now).is_none());
    }
}
