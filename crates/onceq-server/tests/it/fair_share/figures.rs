//! What the victim measures and how a loaded figure is held to its
//! unloaded one: each operation's latencies in a phase, reduced to their
//! median and worst, and a [`Bound`] of the form
//! `loaded ≤ max(factor × unloaded, unloaded + slack)`: the factor keeps a
//! slow operation's bound proportional, the slack keeps a fast one's from
//! being a few milliseconds (a debug build on a shared 2-core machine
//! stalls for that long without any tenant's help).

use std::time::Duration;

/// One operation's latencies in one phase.
#[derive(Debug, Clone, Default)]
pub struct Samples(Vec<Duration>);

impl Samples {
    pub fn push(&mut self, d: Duration) {
        self.0.push(d);
    }

    fn sorted(&self) -> Vec<Duration> {
        assert!(!self.0.is_empty(), "no samples");
        let mut v = self.0.clone();
        v.sort();
        v
    }

    pub fn median(&self) -> Duration {
        let v = self.sorted();
        v[v.len() / 2]
    }

    pub fn worst(&self) -> Duration {
        *self.sorted().last().unwrap()
    }
}

/// How far a loaded figure may stray from its unloaded one.
#[derive(Debug, Clone, Copy)]
pub struct Bound {
    pub factor: u32,
    pub slack: Duration,
}

impl Bound {
    /// The most `unloaded` may become under load.
    pub fn limit(&self, unloaded: Duration) -> Duration {
        (unloaded * self.factor).max(unloaded + self.slack)
    }
}

/// One victim operation's figures, unloaded and loaded, and the bounds of
/// its median and its worst.
pub struct Compared<'a> {
    pub operation: &'a str,
    pub unloaded: &'a Samples,
    pub loaded: &'a Samples,
    pub median: Bound,
    pub worst: Bound,
}

impl Compared<'_> {
    /// A table row for the docs: operation, unloaded, loaded, bounds.
    pub fn row(&self) -> String {
        let (u, l) = (self.unloaded, self.loaded);
        format!(
            "| {} | {} / {} | {} / {} | {} / {} |",
            self.operation,
            ms(u.median()),
            ms(u.worst()),
            ms(l.median()),
            ms(l.worst()),
            ms(self.median.limit(u.median())),
            ms(self.worst.limit(u.worst())),
        )
    }

    /// Whether both loaded figures are within their bounds; if not, why.
    pub fn check(&self) -> Result<(), String> {
        let (u, l) = (self.unloaded, self.loaded);
        for (what, unloaded, loaded, bound) in [
            ("median", u.median(), l.median(), self.median),
            ("worst", u.worst(), l.worst(), self.worst),
        ] {
            let limit = bound.limit(unloaded);
            if loaded > limit {
                return Err(format!(
                    "{}: {what} {} loaded, over its bound {} (unloaded {})",
                    self.operation,
                    ms(loaded),
                    ms(limit),
                    ms(unloaded)
                ));
            }
        }
        Ok(())
    }
}

/// Milliseconds, as the docs' tables show them.
pub fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms < 10.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.0} ms")
    }
}
