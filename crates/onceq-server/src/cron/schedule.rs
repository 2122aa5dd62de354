//! When a schedule fires: its expression (croner) read in its zone (jiff's
//! tzdb: the system's, else the copy bundled in the binary).
//!
//! Daylight saving follows croner's rules (the Open Cron Pattern
//! Specification), documented in `docs/cron.md`:
//! - a wall-clock time a spring-forward skips: a *fixed-time* schedule
//!   (`30 2 * * *`) fires once at the first instant after the gap (03:00
//!   local); an interval schedule (`*/15 * * * *`) has no ticks there;
//! - a wall-clock time a fall-back repeats: a fixed-time schedule fires
//!   once, at the earlier instant; an interval schedule fires at both.

use croner::{
    Cron,
    parser::{CronParser, Seconds, Year},
};
use jiff::{Timestamp, Zoned, tz::TimeZone};

/// A schedule's *when*, parsed.
#[derive(Debug, Clone)]
pub enum Schedule {
    /// An expression, in a zone.
    Cron(Box<Cron>, TimeZone),
    /// One run at a time.
    Once(Timestamp),
}

/// Why an expression or a zone was refused (the caller names the field).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(pub String);

/// Parses `cron_expr`: five fields, six with seconds first, or an `@name`.
pub fn parse_expr(expr: &str) -> Result<Cron, Refusal> {
    CronParser::builder()
        .seconds(Seconds::Optional)
        .year(Year::Disallowed)
        .build()
        .parse(expr)
        .map_err(|e| Refusal(e.to_string()))
}

/// The IANA zone `name` (`UTC` included).
pub fn parse_zone(name: &str) -> Result<TimeZone, Refusal> {
    // A path-looking or empty name is no IANA name (and must not be read
    // as a file of the system's tzdb).
    if name.is_empty() || name.starts_with('/') || name.contains("..") {
        return Err(Refusal(format!("{name:?} is not an IANA time zone name")));
    }
    TimeZone::get(name).map_err(|_| Refusal(format!("{name:?} is not an IANA time zone name")))
}

impl Schedule {
    /// The first tick strictly after `after` (`None`: there is none, as
    /// for a one-shot whose time is at or before `after`).
    pub fn next_after(&self, after: Timestamp) -> Result<Option<Timestamp>, Refusal> {
        match self {
            Schedule::Once(at) => Ok((*at > after).then_some(*at)),
            Schedule::Cron(cron, tz) => {
                let start = Zoned::new(after, tz.clone());
                cron.find_next_occurrence(&start, false)
                    .map(|z| Some(z.timestamp()))
                    .map_err(|e| Refusal(format!("it never fires ({e})")))
            }
        }
    }

    /// The first tick: a one-shot's own time (even if already past: it
    /// fires at once), else the first tick after `now`.
    pub fn first(&self, now: Timestamp) -> Result<Option<Timestamp>, Refusal> {
        match self {
            Schedule::Once(at) => Ok(Some(*at)),
            Schedule::Cron(..) => self.next_after(now),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn cron(expr: &str, zone: &str) -> Schedule {
        Schedule::Cron(
            Box::new(parse_expr(expr).unwrap()),
            parse_zone(zone).unwrap(),
        )
    }

    fn ticks(s: &Schedule, from: &str, n: usize) -> Vec<String> {
        let mut t = ts(from);
        (0..n)
            .map(|_| {
                t = s.next_after(t).unwrap().unwrap();
                t.to_string()
            })
            .collect()
    }

    #[test]
    fn fields_seconds_and_names() {
        assert_eq!(
            ticks(&cron("*/20 * * * *", "UTC"), "2026-01-01T00:00:00Z", 2),
            ["2026-01-01T00:20:00Z", "2026-01-01T00:40:00Z"]
        );
        assert_eq!(
            ticks(&cron("*/30 * * * * *", "UTC"), "2026-01-01T00:00:00Z", 2),
            ["2026-01-01T00:00:30Z", "2026-01-01T00:01:00Z"],
            "six fields: seconds first"
        );
        assert_eq!(
            ticks(&cron("@hourly", "UTC"), "2026-01-01T00:10:00Z", 1),
            ["2026-01-01T01:00:00Z"]
        );
        assert_eq!(
            ticks(&cron("@daily", "Asia/Tokyo"), "2026-01-01T00:00:00Z", 1),
            ["2026-01-01T15:00:00Z"],
            "midnight in Tokyo"
        );
        for bad in [
            "",
            "* * * *",
            "61 * * * *",
            "* * * * * * 2030",
            "@sometimes",
            "x y z a b",
        ] {
            assert!(parse_expr(bad).is_err(), "{bad:?} accepted");
        }
        for bad in ["Mars/Olympus", "", "/etc/passwd", "../UTC", "Europe/../UTC"] {
            assert!(parse_zone(bad).is_err(), "{bad:?} accepted");
        }
    }

    /// Europe/Berlin skips 02:00..03:00 on 2026-03-29: a daily 02:30 fires
    /// at the first instant after the gap, 03:00 CEST (01:00 UTC), once.
    #[test]
    fn a_skipped_hour_fires_once_after_the_gap() {
        let s = cron("30 2 * * *", "Europe/Berlin");
        assert_eq!(
            ticks(&s, "2026-03-27T12:00:00Z", 3),
            [
                "2026-03-28T01:30:00Z", // 02:30 CET
                "2026-03-29T01:00:00Z", // 03:00 CEST: 02:30 does not exist
                "2026-03-30T00:30:00Z", // 02:30 CEST
            ]
        );
        // An interval schedule has no ticks in the gap.
        let every = cron("0,30 * * * *", "Europe/Berlin");
        assert_eq!(
            ticks(&every, "2026-03-29T00:15:00Z", 3),
            [
                "2026-03-29T00:30:00Z", // 01:30 CET
                "2026-03-29T01:00:00Z", // 03:00 CEST
                "2026-03-29T01:30:00Z", // 03:30 CEST
            ]
        );
    }

    /// Europe/Berlin repeats 02:00..03:00 on 2026-10-25: a daily 02:30
    /// fires once, at the first (CEST) instant; an interval schedule fires
    /// at both.
    #[test]
    fn a_repeated_hour_fires_a_fixed_time_once() {
        let s = cron("30 2 * * *", "Europe/Berlin");
        assert_eq!(
            ticks(&s, "2026-10-24T12:00:00Z", 2),
            [
                "2026-10-25T00:30:00Z", // 02:30 CEST, the earlier instant
                "2026-10-26T01:30:00Z", // 02:30 CET the next day
            ]
        );
        let every = cron("30 * * * *", "Europe/Berlin");
        assert_eq!(
            ticks(&every, "2026-10-24T23:45:00Z", 3),
            [
                "2026-10-25T00:30:00Z", // 02:30 CEST
                "2026-10-25T01:30:00Z", // 02:30 CET
                "2026-10-25T02:30:00Z", // 03:30 CET
            ]
        );
    }

    #[test]
    fn a_one_shot_fires_at_its_time_then_never() {
        let s = Schedule::Once(ts("2026-05-01T10:00:00Z"));
        assert_eq!(
            s.first(ts("2026-06-01T00:00:00Z")).unwrap(),
            Some(ts("2026-05-01T10:00:00Z")),
            "a past one-shot still fires once"
        );
        assert_eq!(s.next_after(ts("2026-05-01T10:00:00Z")).unwrap(), None);
    }

    #[test]
    fn an_impossible_date_never_fires() {
        assert!(
            cron("0 0 30 2 *", "UTC")
                .next_after(ts("2026-01-01T00:00:00Z"))
                .is_err()
        );
    }
}
