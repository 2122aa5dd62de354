//! The victim's latency: how long each send took to its 202 (the web
//! route, its ledger and its publish to onceq), and how long each key took
//! from its first send to its first 202 (retries through the faults
//! included). With `--hostile`, split at the moment the hostile tenant
//! arrived: sends and keys started before it, and those started after.

use std::fmt;
use std::time::Duration;

/// One measurement: when it started (ms since the load began) and how long
/// it took (ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// Start, in ms since the load began.
    pub at_ms: u64,
    /// Length, in ms.
    pub ms: u64,
}

/// Percentiles of a set of samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Percentiles {
    /// How many.
    pub n: usize,
    /// Median, ms.
    pub p50: u64,
    /// 99th percentile, ms.
    pub p99: u64,
    /// Largest, ms.
    pub max: u64,
}

impl Percentiles {
    /// Of `ms` (nearest rank); all zero when empty.
    pub fn of(mut ms: Vec<u64>) -> Percentiles {
        if ms.is_empty() {
            return Percentiles::default();
        }
        ms.sort_unstable();
        let rank = |q: f64| ms[((q * ms.len() as f64).ceil() as usize).clamp(1, ms.len()) - 1];
        Percentiles {
            n: ms.len(),
            p50: rank(0.50),
            p99: rank(0.99),
            max: ms[ms.len() - 1],
        }
    }
}

impl fmt::Display for Percentiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "n {}, p50 {} ms, p99 {} ms, max {} ms",
            self.n, self.p50, self.p99, self.max
        )
    }
}

/// Sends and keys of one stretch of the load.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Phase {
    /// Send → 202.
    pub sends: Percentiles,
    /// A key's first send → its first 202.
    pub keys: Percentiles,
}

impl Phase {
    /// Of the samples started in `[from, to)` ms.
    pub fn of(sends: &[Sample], keys: &[Sample], from: u64, to: u64) -> Phase {
        let within = |s: &[Sample]| {
            s.iter()
                .filter(|x| (from..to).contains(&x.at_ms))
                .map(|x| x.ms)
                .collect()
        };
        Phase {
            sends: Percentiles::of(within(sends)),
            keys: Percentiles::of(within(keys)),
        }
    }
}

/// The bound the victim's latency must stay within while the hostile
/// tenant is there: the median send at most `sends_p50`, the median key
/// (first send to first 202, its retries through the faults included) at
/// most `keys_p50`. Medians, because the tails of a chaos run are the
/// faults' (a send caught by a server kill or a PostgreSQL restart waits
/// out the restart either way); the tails are reported beside them, and
/// the latency before the tenant came. Absolute bounds rather than a
/// multiple of that "before": the load's first third meets fewer faults
/// (each kind's first one comes after about its interval), so it is not a
/// fair baseline. A tenant that took the servers from the victim would
/// break them at once: its sends would time out (after 5 s) and be
/// retried, so the keys' median would pass the client's timeout.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bound {
    /// The most the sends' median may be.
    pub sends_p50: Duration,
    /// The most the keys' median may be.
    pub keys_p50: Duration,
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl Bound {
    /// Both medians within the bound (and both measured).
    pub fn met(&self, with: &Phase) -> bool {
        let ok = |p: &Percentiles, bound: Duration| p.n > 0 && p.p50 <= ms(bound);
        ok(&with.sends, self.sends_p50) && ok(&with.keys, self.keys_p50)
    }
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "with the hostile tenant there, p50 of sends ≤ {} ms and of keys ≤ {} ms",
            ms(self.sends_p50),
            ms(self.keys_p50)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_by_nearest_rank() {
        let p = Percentiles::of((1..=100).rev().collect());
        assert_eq!((p.n, p.p50, p.p99, p.max), (100, 50, 99, 100));
        assert_eq!(Percentiles::of(vec![]), Percentiles::default());
        assert_eq!(Percentiles::of(vec![7]).p99, 7);
    }

    #[test]
    fn phases_split_by_start_and_the_bound_is_on_medians() {
        let s = |at_ms, ms| Sample { at_ms, ms };
        let sends = [s(0, 10), s(10, 12), s(500, 40), s(600, 2_000)];
        let keys = [s(0, 10), s(500, 35)];
        let before = Phase::of(&sends, &keys, 0, 100);
        let with = Phase::of(&sends, &keys, 100, u64::MAX);
        assert_eq!((before.sends.n, before.sends.p50), (2, 10));
        assert_eq!(
            (with.sends.n, with.sends.p50, with.sends.p99),
            (2, 40, 2_000)
        );
        let bound = Bound {
            sends_p50: Duration::from_millis(40),
            keys_p50: Duration::from_millis(35),
        };
        assert!(bound.met(&with), "40 ≤ 40 and 35 ≤ 35");
        let tight = Bound {
            keys_p50: Duration::from_millis(34),
            ..bound
        };
        assert!(!tight.met(&with));
        assert!(!bound.met(&Phase::default()), "nothing measured");
    }
}
