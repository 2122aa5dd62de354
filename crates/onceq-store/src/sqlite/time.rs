//! Timestamps are stored as INTEGER microseconds since the Unix epoch: exact
//! (jiff's resolution is nanoseconds, PostgreSQL's microseconds, so both
//! backends round the same way) and ordered by plain integer comparison.

use jiff::{SignedDuration, Timestamp};
use rusqlite::{Row, types::Type};

/// `t` as stored.
pub(super) fn micros(t: Timestamp) -> i64 {
    t.as_microsecond()
}

/// `t + d` as stored; `what` names `d` in the `Invalid` error when the sum
/// falls outside the representable range (as the PostgreSQL backend reports
/// it). The server's range checks make that unreachable from the API.
pub(super) fn after(t: Timestamp, d: SignedDuration, what: &str) -> crate::Result<i64> {
    t.checked_add(d)
        .map(micros)
        .map_err(|_| crate::StoreError::Invalid(format!("{what} is out of range")))
}

/// `t + secs` seconds as stored (a queue's own settings: always in range).
pub(super) fn after_secs(t: Timestamp, secs: i64) -> i64 {
    micros(t).saturating_add(secs.saturating_mul(1_000_000))
}

/// Whole seconds from `earlier` to `now`, never negative.
pub(super) fn whole_seconds_since(earlier: i64, now: Timestamp) -> i64 {
    (micros(now).saturating_sub(earlier) / 1_000_000).max(0)
}

/// `t` as a later read returns it: whole microseconds. Values answered
/// straight from a write go through this, so they equal what reads return.
pub(super) fn stored(t: Timestamp) -> Timestamp {
    Timestamp::from_microsecond(micros(t)).unwrap_or(t)
}

/// A computed stored value (`after(..)`) back as a timestamp.
pub(super) fn to_timestamp(us: i64) -> crate::Result<Timestamp> {
    Timestamp::from_microsecond(us).map_err(crate::StoreError::internal)
}

/// A stored timestamp, read from column `idx`.
pub(super) fn get(row: &Row<'_>, idx: usize) -> rusqlite::Result<Timestamp> {
    from_micros(row.get(idx)?, idx)
}

/// A nullable stored timestamp, read from column `idx`.
pub(super) fn get_opt(row: &Row<'_>, idx: usize) -> rusqlite::Result<Option<Timestamp>> {
    row.get::<_, Option<i64>>(idx)?
        .map(|us| from_micros(us, idx))
        .transpose()
}

fn from_micros(us: i64, idx: usize) -> rusqlite::Result<Timestamp> {
    Timestamp::from_microsecond(us)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(idx, Type::Integer, Box::new(e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_arithmetic() {
        let t: Timestamp = "2026-01-02T03:04:05.123456Z".parse().unwrap();
        assert_eq!(Timestamp::from_microsecond(micros(t)).unwrap(), t);
        assert_eq!(
            after(t, SignedDuration::from_secs(2), "d").unwrap(),
            micros(t) + 2_000_000
        );
        assert!(after(t, SignedDuration::MAX, "d").is_err());
        assert_eq!(after_secs(t, 1), micros(t) + 1_000_000);
        assert_eq!(whole_seconds_since(micros(t) - 2_999_999, t), 2);
        assert_eq!(whole_seconds_since(micros(t) + 5, t), 0);
    }
}
