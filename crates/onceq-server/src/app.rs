//! The router: every route of the contract, and the layers around them.

use axum::{
    Router,
    extract::DefaultBodyLimit,
    http::{Method, Uri},
    middleware,
    routing::{get, post},
};
use onceq_types::ErrorCode;
use tower_http::trace::TraceLayer;

use crate::{
    ApiError, AppState, dashboard, envelope,
    routes::{consume, discovery, health, publish, push, queues},
};

/// Builds the HTTP application over `state`.
pub fn app(state: AppState) -> Router {
    let queue_api = Router::new()
        .route("/publish", post(publish::publish))
        .route("/publish_batch", post(publish::publish_batch))
        .route("/consume", post(consume::consume))
        .route("/ack", post(consume::ack))
        .route("/nack", post(consume::nack))
        .route("/extend", post(consume::extend))
        .route("/create", post(queues::create))
        .route("/list", get(queues::list))
        .route("/get/{queue}", get(queues::get))
        .route("/delete", post(queues::delete_by_body))
        .route(
            "/delete/{queue}",
            axum::routing::delete(queues::delete).post(queues::delete),
        )
        .route("/stats/{queue}", get(queues::stats))
        .route("/purge/{queue}", post(queues::purge))
        .route("/dlq/redrive/{queue}", post(queues::redrive))
        .route("/push_subscribe/{queue}", post(push::subscribe))
        .route("/push_subscriptions/{queue}", get(push::list))
        .route(
            "/push_unsubscribe/{queue}/{subscription_id}",
            axum::routing::delete(push::unsubscribe).post(push::unsubscribe),
        );

    Router::new()
        .nest("/v1/queue", queue_api)
        .route("/v1/discovery", get(discovery::discovery))
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .merge(dashboard::routes())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        // Bodies are read (and limited) by `extract::Body` so that an
        // oversized body still gets the contract's envelope.
        .layer(DefaultBodyLimit::disable())
        .layer(middleware::from_fn(envelope::track_request))
        .layer(TraceLayer::new_for_http())
        .with_state(state)
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
