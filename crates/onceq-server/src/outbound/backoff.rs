//! The wait before a failed delivery's next attempt, for push deliveries
//! (and so cron task runs) and webhook attempts alike.

use std::time::Duration;

/// The wait after the `failures`-th failed delivery of a message:
/// `base · 2^(failures − 1)`, at most `max`, of which the upper half is
/// random (`jitter` in 0..=1). Half fixed so a retry never comes back much
/// sooner than planned; half random so the messages of an endpoint that
/// failed them all at once come back spread out, not in one burst.
pub fn backoff(failures: i32, base: Duration, max: Duration, jitter: f64) -> Duration {
    let doublings = failures.saturating_sub(1).clamp(0, 31) as u32;
    let step = base.saturating_mul(1u32 << doublings).min(max);
    let half = step / 2;
    half + half.mul_f64(jitter.clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::backoff;

    #[test]
    fn backoff_doubles_with_jitter_and_a_cap() {
        let (base, max) = (Duration::from_secs(5), Duration::from_secs(3600));
        let s = |secs: f64| Duration::from_secs_f64(secs);
        assert_eq!(backoff(1, base, max, 0.0), s(2.5));
        assert_eq!(backoff(1, base, max, 1.0), s(5.0));
        assert_eq!(backoff(2, base, max, 1.0), s(10.0));
        assert_eq!(backoff(3, base, max, 0.5), s(15.0));
        assert_eq!(backoff(20, base, max, 1.0), max);
        assert_eq!(backoff(i32::MAX, base, max, 0.0), max / 2);
        assert_eq!(backoff(0, base, max, 1.0), base);
    }
}
