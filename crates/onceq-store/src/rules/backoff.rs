//! The retry backoff (`onceq_types::RetryBackoff`): how long a failed
//! hand-out waits, `delayed`, before the message is handed out again.
//!
//! `base = min(max_seconds, initial_seconds * multiplier ^ (delivery_count -
//! 1))`, computed as `exp(min(ln max, ln initial + (n - 1) ln multiplier))`
//! so that no delivery count, however high (a queue without a dead-letter
//! queue requeues for ever), overflows; then `base * (1 - jitter * r)` for
//! `r` uniform in [0, 1); rounded to the millisecond.
//!
//! `postgres/sql/lease_expire.sql` computes the same in SQL for a whole
//! pass of expired leases; the conformance suite (`tests/it/backoff.rs`)
//! holds both backends to this, to the millisecond.

use jiff::SignedDuration;
use onceq_types::RetryBackoff;

/// The delay after hand-out number `delivery_count` failed, `r` in [0, 1)
/// being the random draw the jitter scales (tests pass their own).
pub(crate) fn retry_delay(b: &RetryBackoff, delivery_count: i32, r: f64) -> SignedDuration {
    let failed_before = f64::from(delivery_count.max(1) - 1);
    let initial = f64::from(b.initial_seconds.max(1));
    let max = f64::from(b.max_seconds.max(b.initial_seconds).max(1));
    let ln_base = (initial.ln() + failed_before * b.multiplier.max(1.0).ln()).min(max.ln());
    let jittered = ln_base.exp() * (1.0 - b.jitter.clamp(0.0, 1.0) * r.clamp(0.0, 1.0));
    SignedDuration::from_millis((jittered * 1000.0).round() as i64)
}

/// How long a failed hand-out of a message handed out `delivery_count`
/// times waits: its queue's backoff when it has one and `by_backoff` (a
/// nack without a delay of its own, an expired lease, a failed push
/// delivery), else `otherwise` (the nack's own delay; zero: at once).
pub(crate) fn requeue_delay(
    backoff: Option<&RetryBackoff>,
    by_backoff: bool,
    delivery_count: i32,
    otherwise: SignedDuration,
) -> SignedDuration {
    match backoff {
        Some(b) if by_backoff => retry_delay(b, delivery_count, rand::random::<f64>()),
        _ => otherwise,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn backoff(initial: i32, multiplier: f64, max: i32, jitter: f64) -> RetryBackoff {
        RetryBackoff {
            initial_seconds: initial,
            multiplier,
            max_seconds: max,
            jitter,
        }
    }

    fn secs(d: SignedDuration) -> f64 {
        d.as_secs_f64()
    }

    #[test]
    fn grows_by_the_multiplier_up_to_the_cap() {
        let b = backoff(2, 3.0, 100, 0.0);
        let got: Vec<f64> = (1..=6).map(|n| secs(retry_delay(&b, n, 0.5))).collect();
        assert_eq!(got, [2.0, 6.0, 18.0, 54.0, 100.0, 100.0]);
        // A constant backoff, and a count that would overflow any power.
        assert_eq!(secs(retry_delay(&backoff(5, 1.0, 60, 0.0), 900, 0.0)), 5.0);
        let huge = retry_delay(&backoff(1, 10.0, 604_800, 0.0), i32::MAX, 0.0);
        assert_eq!(secs(huge), 604_800.0);
        // Before any hand-out (never asked, but defined): the first delay.
        assert_eq!(secs(retry_delay(&b, 0, 0.0)), 2.0);
    }

    #[test]
    fn jitter_takes_up_to_its_fraction_off() {
        let b = backoff(10, 2.0, 1000, 0.25);
        // r = 0 keeps the whole delay; r near 1 takes 25 % off.
        assert_eq!(secs(retry_delay(&b, 2, 0.0)), 20.0);
        assert_eq!(secs(retry_delay(&b, 2, 0.5)), 17.5);
        assert_eq!(secs(retry_delay(&b, 2, 0.999_999)), 15.0);
        // Full jitter: anywhere from 0 to the delay.
        let full = backoff(10, 2.0, 1000, 1.0);
        assert_eq!(secs(retry_delay(&full, 1, 0.999_999)), 0.0);
        assert_eq!(secs(retry_delay(&full, 1, 0.3)), 7.0);
    }

    #[test]
    fn the_random_draw_stays_in_its_bounds() {
        let b = backoff(8, 2.0, 3600, 0.5);
        for _ in 0..1000 {
            let d = secs(requeue_delay(Some(&b), true, 3, SignedDuration::ZERO));
            assert!((16.0..=32.0).contains(&d), "{d}");
        }
    }

    #[test]
    fn only_asked_for_and_set_backoffs_apply() {
        let b = backoff(8, 2.0, 3600, 0.0);
        let own = SignedDuration::from_secs(3);
        assert_eq!(
            requeue_delay(Some(&b), true, 1, own),
            SignedDuration::from_secs(8)
        );
        assert_eq!(
            requeue_delay(Some(&b), false, 1, own),
            own,
            "the nack's own delay"
        );
        assert_eq!(
            requeue_delay(None, true, 1, own),
            own,
            "no backoff: as before"
        );
    }
}
