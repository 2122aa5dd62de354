//! The router: every route of the contract, and the layers around them.

use axum::{
    Router,
    extract::DefaultBodyLimit,
    http::{Method, Uri, header},
    middleware,
    routing::{MethodRouter, delete, get, post},
};
use onceq_types::ErrorCode;
use tower_http::{
    sensitive_headers::SetSensitiveRequestHeadersLayer,
    trace::{DefaultMakeSpan, TraceLayer},
};

use crate::{
    ApiError, AppState, envelope,
    guard::{Guarded, guard},
    routes::{account, consume, discovery, health, publish, queues},
};

/// Builds the HTTP application over `state`.
pub fn app(state: AppState) -> Router {
    // Every keyed route runs behind the guard of its capability (auth,
    // rate limit, scope, credit, metering).
    let keyed = |id: &str, route: MethodRouter<AppState>| {
        route.layer(middleware::from_fn_with_state(
            Guarded::new(&state, id),
            guard,
        ))
    };
    let queue_api = Router::new()
        .route("/publish", keyed("queue.publish", post(publish::publish)))
        .route(
            "/publish_batch",
            keyed("queue.publish_batch", post(publish::publish_batch)),
        )
        .route("/consume", keyed("queue.consume", post(consume::consume)))
        .route("/ack", keyed("queue.ack", post(consume::ack)))
        .route("/nack", keyed("queue.nack", post(consume::nack)))
        .route("/extend", keyed("queue.extend", post(consume::extend)))
        .route("/create", keyed("queue.create", post(queues::create)))
        .route("/list", keyed("queue.list", get(queues::list)))
        .route("/get/{queue}", keyed("queue.get", get(queues::get)))
        .route(
            "/delete",
            keyed("queue.delete", post(queues::delete_by_body)),
        )
        .route(
            "/delete/{queue}",
            keyed("queue.delete", delete(queues::delete).post(queues::delete)),
        )
        .route("/stats/{queue}", keyed("queue.stats", get(queues::stats)))
        .route("/purge/{queue}", keyed("queue.purge", post(queues::purge)))
        .route(
            "/dlq/redrive/{queue}",
            keyed("queue.dlq.redrive", post(queues::redrive)),
        );
    let account_api = Router::new()
        .route("/balance", keyed("account.balance", get(account::balance)))
        .route("/usage", keyed("account.usage", get(account::usage)));

    Router::new()
        .nest("/v1/queue", queue_api)
        .nest("/v1/account", account_api)
        .route("/v1/discovery", get(discovery::discovery))
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        // Bodies are read (and limited) by `extract::Body` so that an
        // oversized body still gets the contract's envelope.
        .layer(DefaultBodyLimit::disable())
        .layer(middleware::from_fn(envelope::track_request))
        // Request spans carry method and path only. Headers are not logged,
        // and Authorization is marked sensitive in case a layer ever does
        // (keys are never logged: docs/security.md).
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(DefaultMakeSpan::new().include_headers(false)),
        )
        .layer(SetSensitiveRequestHeadersLayer::new([
            header::AUTHORIZATION,
            header::PROXY_AUTHORIZATION,
            header::COOKIE,
        ]))
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
