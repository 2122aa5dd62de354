//! The router: every route of the contract, and the layers around them.
//!
//! Routes are registered from their handlers' `#[utoipa::path]`
//! annotations (`routes!`), so the path and methods a handler is served at
//! are the ones `/openapi.json` documents (see `openapi`'s module doc for
//! adding one).

use axum::{
    Router,
    extract::DefaultBodyLimit,
    http::{Method, Uri},
    middleware,
};
use onceq_types::ErrorCode;
use tower_http::trace::TraceLayer;
use utoipa::OpenApi;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    ApiError, AppState, dashboard, envelope, metrics, openapi,
    routes::{consume, discovery, health, publish, push, queues},
};

/// Builds the HTTP application over `state`.
pub fn app(state: AppState) -> Router {
    let (router, _) = routes().split_for_parts();
    router
        // The dashboard's HTML pages (and `/` redirecting to them) are for
        // people, not part of the API: served, never in `/openapi.json`.
        .merge(dashboard::routes())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        // Bodies are read (and limited) by `extract::Body` so that an
        // oversized body still gets the contract's envelope.
        .layer(DefaultBodyLimit::disable())
        .layer(middleware::from_fn_with_state(
            state.metrics.clone(),
            metrics::http::track,
        ))
        .layer(middleware::from_fn(envelope::track_request))
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// Every route, each with its OpenAPI operation.
pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .routes(routes!(publish::publish))
        .routes(routes!(publish::publish_batch))
        .routes(routes!(consume::consume))
        .routes(routes!(consume::ack))
        .routes(routes!(consume::nack))
        .routes(routes!(consume::extend))
        .routes(routes!(queues::create))
        .routes(routes!(queues::list))
        .routes(routes!(queues::get))
        .routes(routes!(queues::delete_by_body))
        .routes(routes!(queues::delete))
        .routes(routes!(queues::stats))
        .routes(routes!(queues::purge))
        .routes(routes!(queues::redrive))
        .routes(routes!(push::subscribe))
        .routes(routes!(push::list))
        .routes(routes!(push::unsubscribe))
        .routes(routes!(discovery::discovery))
        .routes(routes!(health::healthz))
        .routes(routes!(health::readyz))
        .routes(routes!(metrics::scrape::metrics))
        .routes(routes!(openapi::openapi_json))
}

async fn not_found(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        ErrorCode::NotFound,
        format!("no endpoint {method} {}", uri.path()),
    )
}

async fn method_not_allowed(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        ErrorCode::MethodNotAllowed,
        format!("{} does not accept {method}", uri.path()),
    )
}
