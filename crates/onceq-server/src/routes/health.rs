//! `/healthz` (the process answers) and `/readyz` (the store answers too).

use axum::{
    extract::State,
    http::{StatusCode, header},
    response::{IntoResponse, Response},
};

use crate::AppState;

/// Liveness: 200 while the process serves HTTP.
#[utoipa::path(
    get,
    path = "/healthz",
    tag = "operations",
    summary = "Liveness",
    description = "200 while the process serves HTTP. No key needed.",
    security(()),
    responses((status = 200, description = "The process answers.", body = String, content_type = "text/plain", example = "ok"))
)]
pub async fn healthz() -> &'static str {
    "ok"
}

/// Readiness: 200 when the store answers a query, 503 otherwise.
#[utoipa::path(
    get,
    path = "/readyz",
    tag = "operations",
    summary = "Readiness",
    description = "200 when the store answers a query, 503 (with Retry-After) otherwise. No key needed.",
    security(()),
    responses(
        (status = 200, description = "The store answers.", body = String, content_type = "text/plain", example = "ready"),
        (status = 503, description = "The store does not answer.", body = String, content_type = "text/plain",
            headers(("Retry-After" = i64, description = "Seconds to wait before retrying.")), example = "store unavailable"),
    )
)]
pub async fn readyz(State(state): State<AppState>) -> Response {
    match state.store.ping().await {
        Ok(()) => (StatusCode::OK, "ready").into_response(),
        Err(e) => {
            tracing::warn!(error = %e, "readiness check failed");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                [(header::RETRY_AFTER, "1")],
                "store unavailable",
            )
                .into_response()
        }
    }
}
