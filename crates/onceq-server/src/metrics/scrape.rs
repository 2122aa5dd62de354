//! `GET /metrics`: the recorder's counters and histograms, then gauges read
//! at scrape time: every queue's depth (one store query, reused for
//! `depth_max_age` so that many scrapers cost one query) and the
//! connection pools' use.

use std::{collections::BTreeMap, sync::Arc};

use axum::{
    extract::State,
    http::{HeaderMap, HeaderValue, header},
    response::{IntoResponse, Response},
};
use jiff::Timestamp;
use onceq_store::{QueueDepth, StoreError};
use onceq_types::ErrorCode;
use tokio::{sync::Mutex, time::Instant};

use super::{ErrorSource, Metrics, text::Families};
use crate::{ApiError, AppState, auth, openapi::responses};

/// The content type of the text format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The last depth query's answer and when it was made.
#[derive(Default)]
pub struct DepthCache {
    last: Mutex<Option<(Instant, Arc<Vec<QueueDepth>>)>>,
}

impl DepthCache {
    /// The depths, queried again when the last answer is older than
    /// `max_age`. Concurrent scrapes wait for one query instead of each
    /// running their own.
    async fn get(&self, state: &AppState) -> Result<Arc<Vec<QueueDepth>>, StoreError> {
        let max_age = state.metrics.config().depth_max_age;
        let mut last = self.last.lock().await;
        if let Some((at, depths)) = &*last
            && at.elapsed() < max_age
        {
            return Ok(depths.clone());
        }
        let depths = Arc::new(state.store.queue_depths(state.clock.now()).await?);
        *last = Some((Instant::now(), depths.clone()));
        Ok(depths)
    }
}

/// `GET /metrics`: Prometheus text format.
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "operations",
    summary = "Prometheus metrics",
    description = "Counters, histograms and gauges in the Prometheus text format (docs/metrics.md lists every series). No key unless the server runs with --metrics-token; 404 when it runs with --metrics-disable.",
    security((), ("metrics_token" = [])),
    responses(
        (status = 200, description = "The metrics.", body = String, content_type = "text/plain; version=0.0.4; charset=utf-8"),
        responses::Unauthorized,
        responses::NotFound,
    )
)]
pub async fn metrics(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let config = state.metrics.config();
    if !config.enabled {
        return Err(ApiError::new(
            ErrorCode::NotFound,
            "no endpoint GET /metrics: this server runs with --metrics-disable",
        ));
    }
    if let Some(token) = &config.token {
        check_token(&headers, token)?;
    }
    let m = &state.metrics;
    let depths = m.depth_cache().get(&state).await;
    if let Err(e) = &depths {
        m.db_error(ErrorSource::Scrape, matches!(e, StoreError::Unavailable(_)));
        tracing::warn!(error = %e, "metrics: queue depths unavailable; serving the rest");
    }
    let mut out = m.handle().render();
    write_gauges(
        &mut out,
        m,
        &state,
        depths.ok().as_deref().map(Vec::as_slice),
    );
    Ok((
        [(header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE))],
        out,
    )
        .into_response())
}

fn check_token(headers: &HeaderMap, token: &str) -> Result<(), ApiError> {
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim);
    // Compared as hashes: equal length, and nothing learnt from where a
    // guess first differs.
    match given {
        Some(g) if auth::key_hash(g) == auth::key_hash(token) => Ok(()),
        _ => Err(ApiError::new(
            ErrorCode::Unauthorized,
            "/metrics needs Authorization: Bearer <the --metrics-token>",
        )),
    }
}

/// Counts of one label set (several queues under `_other`).
#[derive(Default)]
struct Depth {
    available: i64,
    delayed: i64,
    in_flight: i64,
    dead_lettered: i64,
    oldest: Option<Timestamp>,
}

fn write_gauges(out: &mut String, m: &Metrics, state: &AppState, depths: Option<&[QueueDepth]>) {
    let mut f = Families::new(out);
    f.gauge(
        "onceq_queue_depth_ok",
        "1 when the queue depth gauges below were read from the store for this scrape, 0 when the store could not answer.",
    )
    .sample("onceq_queue_depth_ok", &[], if depths.is_some() { 1.0 } else { 0.0 });
    if let Some(depths) = depths {
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
        const AGE: &str = "onceq_queue_oldest_message_age_seconds";
        f.gauge(
            AGE,
            "Age of the oldest message a queue holds (first in publish order, in any state); 0 when empty.",
        );
        let now = state.clock.now();
        for ((project, queue), d) in &by_labels {
            let age = d
                .oldest
                .map_or(0.0, |t| now.duration_since(t).as_secs_f64().max(0.0));
            f.sample(AGE, &[("project", project), ("queue", queue)], age);
        }
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

    let pools = state.store.pool_stats();
    let families: [(&str, &str, fn(&onceq_store::PoolStats) -> Option<usize>); 4] = [
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
    for (name, help, value) in families {
        f.gauge(name, help);
        for p in &pools {
            if let Some(v) = value(p) {
                f.sample(name, &[("pool", p.pool)], v as f64);
            }
        }
    }
    f.gauge("onceq_build_info", "1, labelled with the server's version.")
        .sample(
            "onceq_build_info",
            &[("version", env!("CARGO_PKG_VERSION"))],
            1.0,
        );
}
