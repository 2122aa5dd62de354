//! Gauges read at scrape time: queue depths (from the store's one query),
//! the label cap's use, the connection pools, the build.

use std::collections::BTreeMap;

use jiff::Timestamp;
use onceq_store::{PoolStats, QueueDepth};

use super::{Metrics, text::Families};
use crate::AppState;

/// Appends every scrape-time gauge to `out`; `depths` is `None` when the
/// store did not answer.
pub(super) fn write(
    out: &mut String,
    m: &Metrics,
    state: &AppState,
    depths: Option<&[QueueDepth]>,
) {
    let mut f = Families::new(out);
    f.gauge(
        "onceq_queue_depth_ok",
        "1 when the queue depth gauges below were read from the store for this scrape, 0 when the store could not answer.",
    )
    .sample("onceq_queue_depth_ok", &[], if depths.is_some() { 1.0 } else { 0.0 });
    if let Some(depths) = depths {
        write_depths(&mut f, m, state.clock.now(), depths);
    }
    f.gauge(
        "onceq_metrics_queue_label_sets",
        "(project, queue) label sets in use; at onceq_metrics_queue_label_sets_max, further queues are counted under queue=\"_other\".",
    )
    .sample("onceq_metrics_queue_label_sets", &[], m.queues.len() as f64)
    .gauge(
        "onceq_metrics_queue_label_sets_max",
        "The cap on (project, queue) label sets (--metrics-max-queues).",
    )
    .sample("onceq_metrics_queue_label_sets_max", &[], m.queues.cap() as f64);
    write_pools(&mut f, &state.store().pool_stats());
    write_outbound(&mut f, &state.outbound.limits);
    write_fair_share(&mut f, state);
    f.gauge("onceq_build_info", "1, labelled with the server's version.")
        .sample(
            "onceq_build_info",
            &[("version", env!("CARGO_PKG_VERSION"))],
            1.0,
        );
}

/// Counts of one label set (several queues under `_other`).
#[derive(Default)]
struct Depth {
    available: i64,
    delayed: i64,
    in_flight: i64,
    dead_lettered: i64,
    oldest: Option<Timestamp>,
    paused: u32,
}

fn write_depths(f: &mut Families<'_>, m: &Metrics, now: Timestamp, depths: &[QueueDepth]) {
    // The same label sets as the counters: a queue beyond the cap is added
    // into `_other`.
    let mut by_labels: BTreeMap<(&str, &str), Depth> = BTreeMap::new();
    for d in depths {
        let labels = m
            .queues
            .labels(m.recorder(), &d.queue.project, &d.queue.queue);
        let e = by_labels.entry(labels).or_default();
        e.available += d.available;
        e.delayed += d.delayed;
        e.in_flight += d.in_flight;
        e.dead_lettered += d.dead_lettered;
        e.paused += u32::from(d.paused);
        e.oldest = match (e.oldest, d.oldest_created_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
    const DEPTH: &str = "onceq_queue_messages";
    f.gauge(
        DEPTH,
        "Messages a queue holds now, by state: available (due delayed ones included), delayed, in_flight, and dead_lettered (held by the queue's dead-letter queue).",
    );
    for ((project, queue), d) in &by_labels {
        for (state, n) in [
            ("available", d.available),
            ("delayed", d.delayed),
            ("in_flight", d.in_flight),
            ("dead_lettered", d.dead_lettered),
        ] {
            let labels = [("project", *project), ("queue", *queue), ("state", state)];
            f.sample(DEPTH, &labels, n as f64);
        }
    }
    const PAUSED: &str = "onceq_queue_paused";
    f.gauge(
        PAUSED,
        "1 while a queue is paused (nothing handed out), else 0; under queue=\"_other\", how many of those queues are paused.",
    );
    for ((project, queue), d) in &by_labels {
        let labels = [("project", *project), ("queue", *queue)];
        f.sample(PAUSED, &labels, f64::from(d.paused));
    }
    const AGE: &str = "onceq_queue_oldest_message_age_seconds";
    f.gauge(
        AGE,
        "Age of the oldest message a queue holds (first in publish order, in any state); 0 when empty.",
    );
    for ((project, queue), d) in &by_labels {
        let age = d
            .oldest
            .map_or(0.0, |t| now.duration_since(t).as_secs_f64().max(0.0));
        f.sample(AGE, &[("project", project), ("queue", queue)], age);
    }
}

/// One pool gauge: its name, HELP, and its value for a pool (`None`: no
/// sample for that pool).
type PoolGauge = (&'static str, &'static str, fn(&PoolStats) -> Option<usize>);

const POOL_GAUGES: [PoolGauge; 4] = [
    (
        "onceq_db_pool_max_size",
        "The most connections the pool may open (absent: opened on demand, no cap).",
        |p| p.max_size,
    ),
    (
        "onceq_db_pool_size",
        "Connections open now, idle or in use.",
        |p| Some(p.size),
    ),
    (
        "onceq_db_pool_available",
        "Open connections idle now.",
        |p| Some(p.available),
    ),
    (
        "onceq_db_pool_waiting",
        "Callers waiting for a connection (SQLite writer: requests queued for its thread).",
        |p| Some(p.waiting),
    ),
];

fn write_pools(f: &mut Families<'_>, pools: &[PoolStats]) {
    for (name, help, value) in POOL_GAUGES {
        f.gauge(name, help);
        for p in pools {
            if let Some(v) = value(p) {
                f.sample(name, &[("pool", p.pool)], v as f64);
            }
        }
    }
}

/// Connections and long polls (their bounds, cuts and refusals) and the
/// cron caps (`crate::connections`, `crate::long_polls`,
/// `crate::cron::fairness`). A cap of "none" is reported as 0.
fn write_fair_share(f: &mut Families<'_>, state: &AppState) {
    let none_as_zero = |n: usize| if n == usize::MAX { 0.0 } else { n as f64 };
    let c = &state.connections;
    f.gauge("onceq_connections_open", "Connections held now.")
        .sample("onceq_connections_open", &[], c.open() as f64)
        .gauge(
            "onceq_connections_limit",
            "The connection bounds: total (--max-connections, or sized from the descriptor limit), per_ip (--max-connections-per-ip; 0: none).",
        )
        .sample("onceq_connections_limit", &[("cap", "total")], c.max_total() as f64)
        .sample(
            "onceq_connections_limit",
            &[("cap", "per_ip")],
            none_as_zero(c.max_per_ip()),
        )
        .counter(
            "onceq_long_polls_cut_total",
            "Parked long polls cut short (answered empty, connection closed) to make room for a new connection.",
        )
        .sample("onceq_long_polls_cut_total", &[], c.cut() as f64);
    let polls = &state.long_polls;
    f.gauge(
        "onceq_long_polls_waiting",
        "Long polls (consume with wait_seconds > 0) waiting now.",
    )
    .sample("onceq_long_polls_waiting", &[], polls.waiting() as f64);
    f.gauge(
        "onceq_long_polls_limit",
        "The caps on long polls waiting at once: key (--long-poll-max-per-key), project (--long-poll-max-per-project); 0: none.",
    );
    for (cap, n) in polls.caps() {
        f.sample(
            "onceq_long_polls_limit",
            &[("cap", cap.name())],
            none_as_zero(n),
        );
    }
    f.counter(
        "onceq_long_polls_refused_total",
        "Long polls answered 429 because their key or project was at its cap, by cap.",
    );
    for (cap, n) in polls.refused() {
        f.sample(
            "onceq_long_polls_refused_total",
            &[("cap", cap.name())],
            n as f64,
        );
    }
    let cron = &state.cron_fairness;
    f.gauge(
        "onceq_cron_limit",
        "The cron caps: schedules_per_project (--cron-max-schedules-per-project), runs_per_second_per_project (--cron-project-runs-per-second); 0: none.",
    )
    .sample(
        "onceq_cron_limit",
        &[("cap", "schedules_per_project")],
        f64::from(state.config.cron_max_schedules_per_project),
    )
    .sample(
        "onceq_cron_limit",
        &[("cap", "runs_per_second_per_project")],
        f64::from(cron.per_sec().unwrap_or(0)),
    )
    .counter(
        "onceq_cron_runs_deferred_total",
        "Due cron runs left for a later pass because their project was past its firing rate.",
    )
    .sample("onceq_cron_runs_deferred_total", &[], cron.deferred() as f64);
}

/// Outbound deliveries open now by kind, the caps, and how often a cap
/// made a delivery wait (`crate::outbound::limits`).
fn write_outbound(f: &mut Families<'_>, limits: &crate::outbound::Limits) {
    f.gauge(
        "onceq_outbound_in_flight",
        "Outbound deliveries open now (requests sent, answer not yet read), by kind: push, webhook, cron.",
    );
    for (kind, n) in limits.in_flight() {
        f.sample(
            "onceq_outbound_in_flight",
            &[("kind", kind.name())],
            n as f64,
        );
    }
    let caps = limits.config();
    f.gauge(
        "onceq_outbound_limit",
        "The caps on outbound deliveries open at once: process (--outbound-max-in-flight), project (--outbound-max-per-project), destination (--outbound-max-per-destination), webhook_process (--webhook-max-in-flight), webhook_project (--webhook-max-per-project).",
    );
    for (cap, n) in [
        ("process", caps.max_in_flight),
        ("project", caps.max_per_project),
        ("destination", caps.max_per_destination),
        ("webhook_process", caps.webhook_max_in_flight),
        ("webhook_project", caps.webhook_max_per_project),
    ] {
        f.sample("onceq_outbound_limit", &[("cap", cap)], n as f64);
    }
    f.counter(
        "onceq_outbound_deferred_total",
        "Outbound deliveries that had to wait for room under a cap before being claimed or sent, by cap: project, destination, process, webhook_project (a webhook claim the project had no room in).",
    );
    for (cap, n) in limits.deferrals() {
        f.sample(
            "onceq_outbound_deferred_total",
            &[("cap", cap.name())],
            n as f64,
        );
    }
}
