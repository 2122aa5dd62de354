//! Prometheus metrics: what `GET /metrics` serves (series: `docs/metrics.md`).
//!
//! - [`queues`]: per-queue counters (published, replayed, consumed, acked,
//!   nacked, dead-lettered, lease expiries) behind a bounded set of
//!   `(project, queue)` label sets.
//! - [`http`]: the middleware counting requests by route template, method
//!   and status class, and timing them.
//! - [`scrape`]: the `/metrics` handler: the recorder's counters and
//!   histograms, the depth query's cache, the optional token.
//! - `gauges`: what is read at scrape time: queue depths, paused queues,
//!   pool use.
//! - `process`: the standard `process_*` metrics (memory, CPU, file
//!   descriptors, start time), read from `/proc` at scrape time.
//! - [`text`]: writing gauge families in the Prometheus text format.
//! - `life`: a message's wait and run times, nacks by whether they said why.
//!
//! Counters and histograms live in a `metrics-exporter-prometheus` recorder
//! owned by this [`Metrics`] (not installed globally: every app, and every
//! test server in one process, counts on its own). Handlers hold no handle
//! and do no I/O for metrics: one call each, a read-locked map lookup and
//! an atomic add.

mod gauges;
pub mod http;
mod life;
mod process;
pub mod queues;
pub mod scrape;
pub mod text;

use std::sync::Arc;

use ::metrics::{Counter, Key, Label, Recorder};
use jiff::Timestamp;
use metrics_exporter_prometheus::{
    Matcher, PrometheusBuilder, PrometheusHandle, PrometheusRecorder,
};
use onceq_store::{AckOutcome, ClaimedMessage, LeaseExpiry, NackOutcome, PublishOutcome};

use crate::config::MetricsConfig;

/// Where a database error surfaced (the `source` label of
/// `onceq_db_errors_total`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorSource {
    /// Answering an HTTP request.
    Request,
    /// A background maintenance pass.
    Maintenance,
    /// Reading queue depths for `/metrics`.
    Scrape,
    /// Push deliveries: the dispatcher's scan, a subscription's claim, the
    /// ack or nack of a delivery.
    Push,
}

/// Every metric of one server.
pub struct Metrics {
    recorder: PrometheusRecorder,
    handle: PrometheusHandle,
    /// Per-queue counters.
    pub queues: queues::QueueSeries,
    /// Per-route counters and latency.
    pub http: http::RouteSeries,
    /// `onceq_db_errors_total` by `[source][kind]`, kind 0 = unavailable,
    /// 1 = internal.
    db_errors: [[Counter; 2]; 4],
    /// The cached result of the last depth query.
    depths: scrape::DepthCache,
    config: MetricsConfig,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Metrics {
    /// A fresh set of metrics (all counters at 0).
    pub fn new(config: MetricsConfig) -> Arc<Self> {
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Full(http::DURATION.to_owned()), http::BUCKETS)
            .expect("the latency buckets are not empty")
            .set_buckets_for_metric(Matcher::Full(life::WAIT.to_owned()), life::BUCKETS)
            .expect("the wait buckets are not empty")
            .set_buckets_for_metric(Matcher::Full(life::RUN.to_owned()), life::BUCKETS)
            .expect("the run buckets are not empty")
            .build_recorder();
        describe(&recorder);
        let handle = recorder.handle();
        let queues = queues::QueueSeries::new(config.max_queue_series);
        let db_errors = [
            ErrorSource::Request,
            ErrorSource::Maintenance,
            ErrorSource::Scrape,
            ErrorSource::Push,
        ]
        .map(|source| {
            ["unavailable", "internal"].map(|kind| {
                counter(
                    &recorder,
                    DB_ERRORS,
                    vec![
                        Label::new("source", source_name(source)),
                        Label::new("kind", kind),
                    ],
                )
            })
        });
        Arc::new(Self {
            queues,
            http: http::RouteSeries::default(),
            db_errors,
            depths: scrape::DepthCache::default(),
            recorder,
            handle,
            config,
        })
    }

    /// The settings `/metrics` is served with.
    pub fn config(&self) -> &MetricsConfig {
        &self.config
    }

    /// A publish or batch stored these outcomes: new messages count as
    /// published, idempotent replays as replayed.
    pub fn published(&self, project: &str, queue: &str, outcomes: &[PublishOutcome]) {
        let replayed = outcomes.iter().filter(|o| o.replay).count() as u64;
        let fresh = outcomes.len() as u64 - replayed;
        self.queues.with(&self.recorder, project, queue, |c| {
            c.published.increment(fresh);
            c.replayed.increment(replayed);
        });
    }

    /// A consume (or a push subscription's claim) handed out `claimed` at
    /// `now`: counted, and each first hand-out's wait since its publish.
    pub fn consumed(&self, project: &str, queue: &str, claimed: &[ClaimedMessage], now: Timestamp) {
        self.handed(project, queue, claimed, now, false);
    }

    /// As [`Self::consumed`], for messages a publish handed straight to a
    /// waiting consumer (counted as handed out too).
    pub fn handed_out(
        &self,
        project: &str,
        queue: &str,
        handed: &[ClaimedMessage],
        now: Timestamp,
    ) {
        self.handed(project, queue, handed, now, true);
    }

    fn handed(
        &self,
        project: &str,
        queue: &str,
        claimed: &[ClaimedMessage],
        now: Timestamp,
        at_publish: bool,
    ) {
        if !claimed.is_empty() {
            self.queues.with(&self.recorder, project, queue, |c| {
                c.consumed.increment(claimed.len() as u64);
                if at_publish {
                    c.handed_out.increment(claimed.len() as u64);
                }
                for m in claimed.iter().filter(|m| m.delivery_count == 1) {
                    c.waited.record(life::seconds(m.created_at, now));
                }
            });
        }
    }

    /// `acks` acks that ended their lease were done in the transaction of
    /// the publish that handed their consumer its next message.
    pub fn acks_carried(&self, project: &str, queue: &str, acks: usize) {
        if acks > 0 {
            self.queues.with(&self.recorder, project, queue, |c| {
                c.acks_carried.increment(acks as u64);
            });
        }
    }

    /// An ack answered `acked` (false: the lease was not held; not counted)
    /// at `now`; its run is timed from `consumed_at`.
    pub fn acked(&self, project: &str, queue: &str, acked: AckOutcome, now: Timestamp) {
        self.acked_many(project, queue, &[acked], now);
    }

    /// The acks of a batch, as [`Metrics::acked`] counts each (one lookup
    /// of the queue's counters for the batch).
    pub fn acked_many(&self, project: &str, queue: &str, acks: &[AckOutcome], now: Timestamp) {
        if acks.iter().any(|a| a.acked) {
            self.queues.with(&self.recorder, project, queue, |c| {
                for acked in acks.iter().filter(|a| a.acked) {
                    c.acked.increment(1);
                    if let Some(at) = acked.consumed_at {
                        c.ran.record(life::seconds(at, now));
                    }
                }
            });
        }
    }

    /// A nack (that said why: `with_error`) did this.
    pub fn nacked(&self, project: &str, queue: &str, outcome: &NackOutcome, with_error: bool) {
        if outcome.nacked {
            self.queues.with(&self.recorder, project, queue, |c| {
                c.nacked.increment(1);
                match with_error {
                    true => c.nacked_with_error.increment(1),
                    false => c.nacked_without_error.increment(1),
                }
                c.dead_lettered_by_nack
                    .increment(u64::from(outcome.dead_lettered));
            });
        }
    }

    /// A lease reaper pass did this.
    pub fn leases_expired(&self, expiry: &LeaseExpiry) {
        for q in &expiry.by_queue {
            self.queues
                .with(&self.recorder, &q.queue.project, &q.queue.queue, |c| {
                    c.lease_expired.increment(q.requeued + q.dead_lettered);
                    c.dead_lettered_by_expiry.increment(q.dead_lettered);
                });
        }
    }

    /// A store call failed: the database could not be reached
    /// (`unavailable`, answered 503) or anything else (500).
    pub fn db_error(&self, source: ErrorSource, unavailable: bool) {
        let kind = if unavailable { 0 } else { 1 };
        self.db_errors[source as usize][kind].increment(1);
    }

    /// Moves recorded latency samples into their histograms. Scrapes do this
    /// too; the maintenance loop calls it so that a server nobody scrapes
    /// does not keep every sample in memory.
    pub fn upkeep(&self) {
        self.handle.run_upkeep();
    }

    pub(crate) fn recorder(&self) -> &PrometheusRecorder {
        &self.recorder
    }

    pub(crate) fn handle(&self) -> &PrometheusHandle {
        &self.handle
    }

    pub(crate) fn depth_cache(&self) -> &scrape::DepthCache {
        &self.depths
    }
}

const DB_ERRORS: &str = "onceq_db_errors_total";

fn source_name(source: ErrorSource) -> &'static str {
    match source {
        ErrorSource::Request => "request",
        ErrorSource::Maintenance => "maintenance",
        ErrorSource::Scrape => "scrape",
        ErrorSource::Push => "push",
    }
}

/// Registers (or finds) a histogram on `recorder`.
pub(crate) fn histogram(
    recorder: &PrometheusRecorder,
    name: &'static str,
    labels: Vec<Label>,
) -> ::metrics::Histogram {
    recorder.register_histogram(&Key::from_parts(name, labels), &metadata())
}

/// Registers (or finds) a counter on `recorder`.
pub(crate) fn counter(
    recorder: &PrometheusRecorder,
    name: &'static str,
    labels: Vec<Label>,
) -> Counter {
    recorder.register_counter(&Key::from_parts(name, labels), &metadata())
}

pub(crate) fn metadata() -> ::metrics::Metadata<'static> {
    ::metrics::Metadata::new(module_path!(), ::metrics::Level::INFO, Some(module_path!()))
}

/// The HELP lines of the recorder's series.
fn describe(r: &PrometheusRecorder) {
    for (name, help) in queues::COUNTERS
        .iter()
        .chain(http::COUNTERS)
        .chain([&(DB_ERRORS, "Store calls that failed, by where (request, maintenance, scrape) and kind (unavailable: the database could not be reached; internal: anything else).")])
        .chain([&(life::NACKS, life::NACKS_HELP)])
    {
        r.describe_counter((*name).into(), None, (*help).into());
    }
    r.describe_histogram(
        http::DURATION.into(),
        Some(::metrics::Unit::Seconds),
        http::DURATION_HELP.into(),
    );
    for (name, help) in [(life::WAIT, life::WAIT_HELP), (life::RUN, life::RUN_HELP)] {
        r.describe_histogram(name.into(), Some(::metrics::Unit::Seconds), help.into());
    }
}
