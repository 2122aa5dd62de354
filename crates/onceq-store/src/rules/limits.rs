//! A queue's hand-out limits (queue-api-2.md §6): `max_in_flight` caps its
//! messages in flight at once, `rate_per_sec` its hand-outs per second
//! through a token bucket kept in the queue's row. A claim takes at most
//! [`allowance`]; it never fails for them.
//!
//! The bucket holds at most one second's worth (`rate_per_sec`, at least
//! 1 token), refills at `rate_per_sec` tokens a second by the claim's
//! `now`, and loses one token per message handed out. A bucket never used
//! is full. So over any window of `t` seconds a queue hands out at most
//! `rate_per_sec × t + capacity` messages, whichever servers claim.
//!
//! `postgres/sql/message_claim.sql` computes the same in SQL, in the claim
//! statement itself (the conformance suite holds both backends to this).

use jiff::Timestamp;

/// The bucket's capacity: one second's worth, at least one token.
pub(crate) fn capacity(rate_per_sec: f64) -> f64 {
    rate_per_sec.max(1.0)
}

/// The bucket's tokens at `now`: `tokens` as stored at `refilled_at`
/// (`None`: never used, full) plus what the rate added since, capped.
pub(crate) fn tokens_at(
    rate_per_sec: f64,
    stored: Option<(f64, Timestamp)>,
    now: Timestamp,
) -> f64 {
    let cap = capacity(rate_per_sec);
    match stored {
        None => cap,
        Some((tokens, refilled_at)) => {
            let elapsed = now.duration_since(refilled_at).as_secs_f64().max(0.0);
            (tokens + elapsed * rate_per_sec).min(cap)
        }
    }
}

/// How many messages a claim asking for `max` may take: fewer when the
/// queue's `max_in_flight` leaves fewer free (it has `in_flight` now), or
/// its bucket holds fewer whole `tokens`.
pub(crate) fn allowance(
    max: u32,
    max_in_flight: Option<i32>,
    in_flight: i64,
    tokens: Option<f64>,
) -> u32 {
    let mut n = i64::from(max);
    if let Some(cap) = max_in_flight {
        n = n.min(i64::from(cap) - in_flight);
    }
    if let Some(t) = tokens {
        n = n.min(t.floor() as i64);
    }
    u32::try_from(n.max(0)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::SignedDuration;

    #[test]
    fn allowance_is_the_tightest_limit() {
        assert_eq!(allowance(10, None, 99, None), 10, "no limits");
        assert_eq!(allowance(10, Some(4), 1, None), 3);
        assert_eq!(
            allowance(10, Some(4), 7, None),
            0,
            "over the cap (lowered): none"
        );
        assert_eq!(allowance(10, None, 0, Some(2.9)), 2, "whole tokens only");
        assert_eq!(allowance(10, Some(5), 0, Some(8.0)), 5);
        assert_eq!(allowance(1, Some(5), 0, Some(8.0)), 1);
    }

    #[test]
    fn the_bucket_refills_at_the_rate_up_to_one_second() {
        let t0 = Timestamp::from_second(1_900_000_000).unwrap();
        let later = |ms| t0 + SignedDuration::from_millis(ms);
        assert_eq!(tokens_at(5.0, None, t0), 5.0, "never used: full");
        assert_eq!(tokens_at(5.0, Some((0.0, t0)), later(200)), 1.0);
        assert_eq!(
            tokens_at(5.0, Some((1.5, t0)), later(10_000)),
            5.0,
            "capped"
        );
        assert_eq!(tokens_at(0.5, None, t0), 1.0, "at least one token");
        assert_eq!(tokens_at(0.5, Some((0.0, t0)), later(1000)), 0.5);
        // A clock behind the bucket's refill adds nothing.
        assert_eq!(tokens_at(5.0, Some((2.0, later(1000))), t0), 2.0);
    }
}
