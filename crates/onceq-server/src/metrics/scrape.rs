//! `GET /metrics`: the recorder's counters and histograms, then the gauges
//! read at scrape time (`gauges`): every queue's depth comes from one store
//! query, reused for `depth_max_age` so that many scrapers cost one query.

use std::{net::SocketAddr, sync::Arc};

use axum::{
    Extension,
    extract::{ConnectInfo, State},
    http::{HeaderMap, HeaderValue, header},
    response::{IntoResponse, Response},
};
use onceq_store::{QueueDepth, StoreError};
use onceq_types::ErrorCode;
use tokio::{sync::Mutex, time::Instant};

use super::{ErrorSource, gauges, process};
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
        let depths = Arc::new(state.store().queue_depths(state.clock.now()).await?);
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
    description = "Counters, histograms and gauges in the Prometheus text format (docs/metrics.md lists every series). No key: served to loopback peers only, unless the server runs with --metrics-token (then the token is required from anyone) or --metrics-public (open); 404 when it runs with --metrics-disable.",
    security((), ("metrics_token" = [])),
    responses(
        (status = 200, description = "The metrics.", body = String, content_type = "text/plain; version=0.0.4; charset=utf-8"),
        responses::Unauthorized,
        responses::MetricsForbidden,
        responses::NotFound,
    )
)]
pub async fn metrics(
    State(state): State<AppState>,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let config = state.metrics.config();
    if !config.enabled {
        return Err(ApiError::new(
            ErrorCode::NotFound,
            "no endpoint GET /metrics: this server runs with --metrics-disable",
        ));
    }
    match &config.token {
        Some(token) => check_token(&headers, token)?,
        None if config.public => {}
        // A request with no peer address came from inside the process
        // (tests driving the router), not from the network.
        None => match peer {
            Some(Extension(ConnectInfo(addr))) if !is_local(addr.ip()) => {
                return Err(ApiError::new(
                    ErrorCode::Forbidden,
                    "/metrics is served to loopback peers only: run the server with --metrics-token TOKEN (and scrape with it) or --metrics-public",
                ));
            }
            _ => {}
        },
    }
    let m = &state.metrics;
    let depths = m.depth_cache().get(&state).await;
    if let Err(e) = &depths {
        m.db_error(ErrorSource::Scrape, matches!(e, StoreError::Unavailable(_)));
        tracing::warn!(error = %e, "metrics: queue depths unavailable; serving the rest");
    }
    let mut out = m.handle().render();
    let depths = depths.ok();
    gauges::write(&mut out, m, &state, depths.as_deref().map(Vec::as_slice));
    process::write(&mut out);
    Ok((
        [(header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE))],
        out,
    )
        .into_response())
}

/// Loopback, also written as an IPv4-mapped IPv6 address.
fn is_local(ip: std::net::IpAddr) -> bool {
    ip.to_canonical().is_loopback()
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
