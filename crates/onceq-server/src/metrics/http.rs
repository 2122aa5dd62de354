//! Requests by route template, method and status class, and their latency.
//!
//! The route label is axum's matched path (`/v1/queue/stats/{queue}`, never
//! the queue's name), or `unmatched` for requests no route took, and the
//! method label is one of a fixed list: the label sets are bounded by the
//! router itself. Handles are registered once per (route, method) and kept
//! in a map, so a request costs a read-locked lookup and two atomic
//! operations.

use std::{
    collections::HashMap,
    sync::{Arc, PoisonError, RwLock},
    time::{Duration, Instant},
};

use ::metrics::{Counter, Histogram, Key, Label, Recorder};
use axum::{
    extract::{MatchedPath, Request, State},
    http::{Method, StatusCode},
    middleware::Next,
    response::Response,
};
use metrics_exporter_prometheus::PrometheusRecorder;

use super::{ErrorSource, Metrics, counter, metadata};
use crate::error::StoreFailure;

pub(super) const REQUESTS: &str = "onceq_http_requests_total";
pub(super) const DURATION: &str = "onceq_http_request_duration_seconds";
pub(super) const DURATION_HELP: &str = "Time from receiving a request to its answer, by route template and method. Long-polling consumes count their wait.";
pub(super) const COUNTERS: &[(&str, &str)] = &[(
    REQUESTS,
    "HTTP requests answered, by route template, method and status class (2xx, 4xx, 5xx, ...).",
)];

/// Latency buckets, in seconds: a millisecond to the longest long poll.
pub(super) const BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0,
];

/// The route label of a request no route matched.
pub const UNMATCHED: &str = "unmatched";

const METHODS: [&str; 8] = [
    "GET", "POST", "DELETE", "PUT", "PATCH", "HEAD", "OPTIONS", "OTHER",
];

fn method_index(m: &Method) -> usize {
    match *m {
        Method::GET => 0,
        Method::POST => 1,
        Method::DELETE => 2,
        Method::PUT => 3,
        Method::PATCH => 4,
        Method::HEAD => 5,
        Method::OPTIONS => 6,
        _ => 7,
    }
}

/// The handles of one (route, method).
struct RouteHandles {
    /// By status class: 1xx .. 5xx.
    by_class: [Counter; 5],
    latency: Histogram,
}

impl RouteHandles {
    fn register(r: &PrometheusRecorder, route: &str, method: &'static str) -> Self {
        let labels = || {
            vec![
                Label::new("route", route.to_owned()),
                Label::new("method", method),
            ]
        };
        let by_class = ["1xx", "2xx", "3xx", "4xx", "5xx"].map(|class| {
            let mut l = labels();
            l.push(Label::new("status", class));
            counter(r, REQUESTS, l)
        });
        let latency = r.register_histogram(&Key::from_parts(DURATION, labels()), &metadata());
        Self { by_class, latency }
    }
}

/// Every (route, method) seen so far.
#[derive(Default)]
pub struct RouteSeries {
    routes: RwLock<HashMap<String, [Option<Arc<RouteHandles>>; METHODS.len()]>>,
}

impl RouteSeries {
    fn handles(&self, r: &PrometheusRecorder, route: &str, method: usize) -> Arc<RouteHandles> {
        if let Some(h) = self
            .routes
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(route)
            .and_then(|m| m[method].clone())
        {
            return h;
        }
        let mut routes = self.routes.write().unwrap_or_else(PoisonError::into_inner);
        let slot = &mut routes.entry(route.to_owned()).or_default()[method];
        slot.get_or_insert_with(|| Arc::new(RouteHandles::register(r, route, METHODS[method])))
            .clone()
    }

    /// Counts one answer and its latency.
    fn record(
        &self,
        r: &PrometheusRecorder,
        route: &str,
        method: &Method,
        status: StatusCode,
        elapsed: Duration,
    ) {
        let h = self.handles(r, route, method_index(method));
        let class = usize::from(status.as_u16() / 100).clamp(1, 5) - 1;
        h.by_class[class].increment(1);
        h.latency.record(elapsed.as_secs_f64());
    }
}

/// Middleware: counts and times every request, and counts the store
/// failures behind error answers (`ApiError` marks them on the response).
pub async fn track(State(metrics): State<Arc<Metrics>>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().clone();
    let route = req.extensions().get::<MatchedPath>().cloned();
    let res = next.run(req).await;
    let route = route.as_ref().map_or(UNMATCHED, MatchedPath::as_str);
    metrics.http.record(
        metrics.recorder(),
        route,
        &method,
        res.status(),
        started.elapsed(),
    );
    if let Some(failure) = res.extensions().get::<StoreFailure>() {
        metrics.db_error(ErrorSource::Request, failure.unavailable);
    }
    res
}
