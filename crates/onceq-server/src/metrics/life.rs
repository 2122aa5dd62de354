//! A message's life in the metrics (queue-api-2.md §5): per queue, how long
//! messages wait for their first hand-out and how long a hand-out runs
//! until its ack (histograms), and nacks by whether they gave an error.
//! Fed from what the claim and the ack already return (`created_at`,
//! `delivery_count`, the ack's `consumed_at`): no statement of their own.

/// Seconds from publish to the first hand-out.
pub(super) const WAIT: &str = "onceq_message_wait_seconds";
/// Seconds from a hand-out to its ack.
pub(super) const RUN: &str = "onceq_message_run_seconds";
/// Nacks by `error`: `given` or `none`.
pub(super) const NACKS: &str = "onceq_nacks_total";

pub(super) const WAIT_HELP: &str = "Time from a message's publish to its first hand-out (consume or push), per queue. A delayed message's delay counts.";
pub(super) const RUN_HELP: &str = "Time from a hand-out to its ack, per queue (acks of leases granted before onceq recorded hand-outs are not timed).";
pub(super) const NACKS_HELP: &str = "Nacks that ended a lease, per queue, by whether they said why (error=\"given\") or not (error=\"none\").";

/// From a millisecond to a day: jobs wait and run far longer than requests.
pub(super) const BUCKETS: &[f64] = &[
    0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0, 21600.0,
    86400.0,
];

/// Whole and fractional seconds from `from` to `to`, never negative.
pub(super) fn seconds(from: jiff::Timestamp, to: jiff::Timestamp) -> f64 {
    to.duration_since(from).as_secs_f64().max(0.0)
}
