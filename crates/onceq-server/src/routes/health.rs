//! `/healthz` (the process answers) and `/readyz` (the store answers too).

use axum::{
    extract::State,
    http::{StatusCode, header},
    response::{IntoResponse, Response},
};

use crate::AppState;

/// Liveness: 200 while the process serves HTTP.
pub async fn healthz() -> &'static str {
    "ok"
}

/// Readiness: 200 when the store answers a query, 503 otherwise.
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
