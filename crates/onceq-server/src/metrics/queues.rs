//! Per-queue counters behind a bounded set of label sets.
//!
//! Queue names are chosen by clients (a publish creates its queue), so each
//! `(project, queue)` pair cannot get its own series forever: the first
//! `max_queue_series` pairs seen by this process get one, and every later
//! pair is counted under `{project="_other", queue="_other"}`. A name that
//! starts with `_` cannot be a queue name, so the overflow set never mixes
//! with a real queue. The map only grows up to the cap, so its memory is
//! bounded too.

use std::{
    collections::HashMap,
    sync::{PoisonError, RwLock},
};

use ::metrics::{Counter, Histogram, Label};
use metrics_exporter_prometheus::PrometheusRecorder;

use super::{counter, histogram, life};

/// The label value of the overflow set.
pub const OTHER: &str = "_other";

/// The per-queue counter families and their HELP text.
pub(super) const COUNTERS: &[(&str, &str)] = &[
    (
        PUBLISHED,
        "Messages stored by publish and publish_batch (idempotent replays excluded).",
    ),
    (
        REPLAYED,
        "Publishes answered from their idempotency key (dedupe hits): nothing new stored.",
    ),
    (
        CONSUMED,
        "Messages handed out by consume (every delivery, redeliveries included).",
    ),
    (
        HANDED_OUT,
        "Messages a publish handed straight to a consumer waiting on this server, without a claim (counted in consumed too).",
    ),
    (
        ACKED,
        "Messages acked (acks of a lease no longer held are not counted).",
    ),
    (
        ACKS_CARRIED,
        "Of those, acks a consume carried that the publish handing its consumer the next message did in its own transaction.",
    ),
    (
        NACKED,
        "Messages nacked (requeued, dead-lettered or dropped).",
    ),
    (
        DEAD_LETTERED,
        "Messages moved to the queue's dead-letter queue, by reason: nack (requeue false, or the last allowed delivery) or lease_expired.",
    ),
    (
        LEASE_EXPIRED,
        "Leases that ran out before an ack or nack and were ended by this server's lease reaper.",
    ),
];

const PUBLISHED: &str = "onceq_messages_published_total";
const REPLAYED: &str = "onceq_messages_replayed_total";
const CONSUMED: &str = "onceq_messages_consumed_total";
const HANDED_OUT: &str = "onceq_messages_handed_out_total";
const ACKED: &str = "onceq_messages_acked_total";
const ACKS_CARRIED: &str = "onceq_acks_carried_total";
const NACKED: &str = "onceq_messages_nacked_total";
const DEAD_LETTERED: &str = "onceq_messages_dead_lettered_total";
const LEASE_EXPIRED: &str = "onceq_lease_expiries_total";

/// The counters of one label set.
pub struct QueueCounters {
    pub(super) published: Counter,
    pub(super) replayed: Counter,
    pub(super) consumed: Counter,
    pub(super) handed_out: Counter,
    pub(super) acked: Counter,
    pub(super) acks_carried: Counter,
    pub(super) nacked: Counter,
    pub(super) dead_lettered_by_nack: Counter,
    pub(super) dead_lettered_by_expiry: Counter,
    pub(super) lease_expired: Counter,
    /// `life::WAIT`, `life::RUN`, `life::NACKS` (error given, none).
    pub(super) waited: Histogram,
    pub(super) ran: Histogram,
    pub(super) nacked_with_error: Counter,
    pub(super) nacked_without_error: Counter,
}

impl QueueCounters {
    fn register(r: &PrometheusRecorder, project: &str, queue: &str) -> Self {
        let labels = || {
            vec![
                Label::new("project", project.to_owned()),
                Label::new("queue", queue.to_owned()),
            ]
        };
        let nacks = |error: &'static str| {
            let mut l = labels();
            l.push(Label::new("error", error));
            counter(r, life::NACKS, l)
        };
        let dead = |reason: &'static str| {
            let mut l = labels();
            l.push(Label::new("reason", reason));
            counter(r, DEAD_LETTERED, l)
        };
        Self {
            published: counter(r, PUBLISHED, labels()),
            replayed: counter(r, REPLAYED, labels()),
            consumed: counter(r, CONSUMED, labels()),
            handed_out: counter(r, HANDED_OUT, labels()),
            acked: counter(r, ACKED, labels()),
            acks_carried: counter(r, ACKS_CARRIED, labels()),
            nacked: counter(r, NACKED, labels()),
            dead_lettered_by_nack: dead("nack"),
            dead_lettered_by_expiry: dead("lease_expired"),
            lease_expired: counter(r, LEASE_EXPIRED, labels()),
            waited: histogram(r, life::WAIT, labels()),
            ran: histogram(r, life::RUN, labels()),
            nacked_with_error: nacks("given"),
            nacked_without_error: nacks("none"),
        }
    }
}

/// The label sets handed out so far, at most `cap` of them.
pub struct QueueSeries {
    cap: usize,
    /// project → queue → counters.
    sets: RwLock<Sets>,
    other: std::sync::OnceLock<QueueCounters>,
}

#[derive(Default)]
struct Sets {
    by_project: HashMap<String, HashMap<String, QueueCounters>>,
    len: usize,
}

impl QueueSeries {
    /// Room for `cap` label sets (plus the overflow set).
    pub fn new(cap: usize) -> Self {
        Self {
            cap,
            sets: RwLock::default(),
            other: std::sync::OnceLock::new(),
        }
    }

    /// Runs `f` on the counters of `(project, queue)`, or of the overflow
    /// set once the cap is reached. The common case is a read lock and two
    /// hash lookups, no allocation.
    pub(super) fn with(
        &self,
        r: &PrometheusRecorder,
        project: &str,
        queue: &str,
        f: impl FnOnce(&QueueCounters),
    ) {
        self.find(r, project, queue, |c, _| f(c));
    }

    /// The label values `(project, queue)` get: their own, after giving
    /// them a set if there is room, or the overflow set's. For gauges, so
    /// that they line up with the counters.
    pub fn labels<'a>(
        &self,
        r: &PrometheusRecorder,
        project: &'a str,
        queue: &'a str,
    ) -> (&'a str, &'a str) {
        let mut own = false;
        self.find(r, project, queue, |_, is_own| own = is_own);
        if own {
            (project, queue)
        } else {
            (OTHER, OTHER)
        }
    }

    /// `f(counters, whether they are the queue's own)`.
    fn find(
        &self,
        r: &PrometheusRecorder,
        project: &str,
        queue: &str,
        f: impl FnOnce(&QueueCounters, bool),
    ) {
        {
            let sets = self.sets.read().unwrap_or_else(PoisonError::into_inner);
            if let Some(c) = sets.by_project.get(project).and_then(|q| q.get(queue)) {
                return f(c, true);
            }
            if sets.len >= self.cap {
                drop(sets);
                return f(self.other(r), false);
            }
        }
        let mut sets = self.sets.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(c) = sets.by_project.get(project).and_then(|q| q.get(queue)) {
            return f(c, true);
        }
        if sets.len >= self.cap {
            drop(sets);
            return f(self.other(r), false);
        }
        sets.len += 1;
        let c = sets
            .by_project
            .entry(project.to_owned())
            .or_default()
            .entry(queue.to_owned())
            .or_insert_with(|| QueueCounters::register(r, project, queue));
        f(c, true)
    }

    /// How many label sets are in use (the overflow set excluded).
    pub fn len(&self) -> usize {
        self.sets.read().unwrap_or_else(PoisonError::into_inner).len
    }

    /// Whether no queue has a label set yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The cap.
    pub fn cap(&self) -> usize {
        self.cap
    }

    fn other(&self, r: &PrometheusRecorder) -> &QueueCounters {
        self.other
            .get_or_init(|| QueueCounters::register(r, OTHER, OTHER))
    }
}

#[cfg(test)]
mod tests {
    use metrics_exporter_prometheus::PrometheusBuilder;

    use super::*;

    #[test]
    fn beyond_the_cap_queues_share_the_overflow_set() {
        let r = PrometheusBuilder::new().build_recorder();
        let series = QueueSeries::new(2);
        for (p, q) in [("p", "a"), ("p", "b"), ("p", "c"), ("x", "a"), ("p", "a")] {
            series.with(&r, p, q, |c| c.published.increment(1));
        }
        assert_eq!(series.len(), 2);
        assert_eq!(series.labels(&r, "p", "b"), ("p", "b"));
        assert_eq!(series.labels(&r, "x", "a"), (OTHER, OTHER));
        let text = r.handle().render();
        let line = |labels: &str| {
            text.lines()
                .find(|l| l.starts_with(&format!("{PUBLISHED}{{{labels}}}")))
                .unwrap_or_else(|| panic!("no {labels} in\n{text}"))
                .rsplit(' ')
                .next()
                .unwrap()
                .to_owned()
        };
        assert_eq!(line(r#"project="p",queue="a""#), "2");
        assert_eq!(line(r#"project="p",queue="b""#), "1");
        assert_eq!(line(r#"project="_other",queue="_other""#), "2");
        assert!(!text.contains(r#"queue="c""#), "{text}");
    }
}
