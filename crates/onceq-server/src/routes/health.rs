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
    description = "200 when the store answers a query and can write, 503 (with Retry-After) otherwise, within the server's store timeout (default 5 s) even when the database stalls. No key needed.",
    security(()),
    responses(
        (status = 200, description = "The store answers.", body = String, content_type = "text/plain", example = "ready"),
        (status = 503, description = "The store does not answer.", body = String, content_type = "text/plain",
            headers(("Retry-After" = i64, description = "Seconds to wait before retrying.")), example = "store unavailable"),
    )
)]
pub async fn readyz(State(state): State<AppState>) -> Response {
    // Bounded: a stalled database (frozen, its network black-holed) must
    // make the probe say not-ready, not hang it.
    let bound = state.config.store_timeout;
    let pinged = match tokio::time::timeout(bound, state.store().ping()).await {
        Ok(pinged) => pinged,
        Err(_) => Err(onceq_store::StoreError::Unavailable(
            format!("the store did not answer within {bound:?}").into(),
        )),
    };
    match pinged {
        Ok(()) => (StatusCode::OK, "ready").into_response(),
        Err(e) => {
            crate::outage::unavailable("readyz", &e);
            (
                StatusCode::SERVICE_UNAVAILABLE,
                [(header::RETRY_AFTER, "1")],
                "store unavailable",
            )
                .into_response()
        }
    }
}
