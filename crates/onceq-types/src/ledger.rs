//! The request ledger's one decision, written once for every ledger (the
//! server's call ledger on both stores, the toolkit's `PgLedger` and
//! `SqliteLedger`): what an entry that the claim statement did not take
//! means. The statements themselves are the files under the `onceq`
//! crate's `sql/ledger/`; the states are drawn in docs/state-machines.md
//! ("A request-ledger entry"). Pure: no I/O, times passed in.

use jiff::Timestamp;

/// How often a ledger retries claim + read when the entry keeps changing
/// under it. Each retry means another request won a race, so a few are
/// plenty; running out is an error (503, retryable), never an outcome.
pub const CLAIM_ATTEMPTS: usize = 4;

/// Rows one purge statement deletes at most (its `limit`), so a large
/// backlog never holds many row locks, or SQLite's writer, for long.
pub const PURGE_BATCH: i64 = 1000;

/// An entry as read (`select.sql`) after the claim statement took nothing.
/// `A` is the recorded answer in the reader's own form.
#[derive(Debug)]
pub struct Entry<A> {
    /// What the entry's holder asked (SHA-256 of method, route and body).
    pub fingerprint: Vec<u8>,
    /// The recorded answer; `None` while in flight.
    pub answer: Option<A>,
    /// The holder's lease, set while in flight.
    pub locked_until: Option<Timestamp>,
    /// After this the entry counts as absent.
    pub expires_at: Timestamp,
}

/// What an entry that the claim did not take means for the claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict<A> {
    /// The same key with another fingerprint (422), answered or not.
    Mismatch,
    /// Another request holds the key until then (409 + `Retry-After`).
    InFlight {
        /// End of the holder's lease.
        locked_until: Timestamp,
    },
    /// Answered before: replay this.
    Completed(A),
}

impl<A> Entry<A> {
    /// The verdict for a claim of `fingerprint` at `now`; `None` when the
    /// entry changed between the claim statement and the read (expired, or
    /// its lease ended) and the claim must be tried again — the claim
    /// statement takes exactly those entries over.
    pub fn judge(self, fingerprint: &[u8; 32], now: Timestamp) -> Option<Verdict<A>> {
        if self.expires_at <= now {
            return None;
        }
        if self.fingerprint != fingerprint {
            return Some(Verdict::Mismatch);
        }
        match (self.answer, self.locked_until) {
            (Some(a), _) => Some(Verdict::Completed(a)),
            (None, Some(until)) if until > now => Some(Verdict::InFlight {
                locked_until: until,
            }),
            (None, _) => None,
        }
    }
}

/// `Retry-After` for an entry in flight until `until`: whole seconds from
/// `now`, rounded up, at least 1 (a `Retry-After: 0` invites a busy loop).
pub fn retry_after_secs(until: Timestamp, now: Timestamp) -> u64 {
    let micros = until
        .as_microsecond()
        .saturating_sub(now.as_microsecond())
        .max(0) as u64;
    micros.div_ceil(1_000_000).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> Timestamp {
        Timestamp::from_second(s).unwrap()
    }

    fn entry(fp: [u8; 32], done: bool, locked: i64, expires: i64) -> Entry<&'static str> {
        Entry {
            fingerprint: fp.to_vec(),
            answer: done.then_some("answer"),
            locked_until: (!done).then(|| t(locked)),
            expires_at: t(expires),
        }
    }

    #[test]
    fn judges_like_the_state_machine() {
        let (fp, other, now) = ([1; 32], [2; 32], t(100));
        assert_eq!(
            entry(fp, false, 130, 999).judge(&fp, now),
            Some(Verdict::InFlight {
                locked_until: t(130)
            })
        );
        assert_eq!(entry(fp, false, 100, 999).judge(&fp, now), None, "lease over: take over");
        assert_eq!(
            entry(fp, true, 0, 999).judge(&fp, now),
            Some(Verdict::Completed("answer"))
        );
        assert_eq!(entry(other, true, 0, 999).judge(&fp, now), Some(Verdict::Mismatch));
        assert_eq!(entry(other, false, 130, 999).judge(&fp, now), Some(Verdict::Mismatch));
        assert_eq!(entry(other, true, 0, 100).judge(&fp, now), None, "expired is absent");
    }

    #[test]
    fn retry_after_rounds_up_and_is_at_least_one() {
        let t = |us| Timestamp::from_microsecond(us).unwrap();
        assert_eq!(retry_after_secs(t(30_000_000), t(0)), 30);
        assert_eq!(retry_after_secs(t(30_000_001), t(0)), 31);
        assert_eq!(retry_after_secs(t(5), t(5)), 1);
        assert_eq!(retry_after_secs(t(0), t(9)), 1);
    }
}
