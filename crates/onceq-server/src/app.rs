//! The router: every route of the contract, and the layers around them.
//!
//! Routes are registered from their handlers' `#[utoipa::path]`
//! annotations (`routes!`), so the path and methods a handler is served at
//! are the ones `/openapi.json` documents (see `openapi`'s module doc for
//! adding one).

use axum::{
    Router,
    extract::DefaultBodyLimit,
    http::{Method, Uri, header},
    middleware,
};
use onceq_types::ErrorCode;
use tower_http::{
    sensitive_headers::SetSensitiveRequestHeadersLayer,
    trace::{DefaultMakeSpan, DefaultOnFailure, TraceLayer},
};
use utoipa::OpenApi;
use utoipa_axum::{
    router::{OpenApiRouter, UtoipaMethodRouter},
    routes,
};

use crate::{
    ApiError, AppState, dashboard, envelope,
    guard::{Guarded, guard},
    metrics, openapi,
    routes::{account, consume, discovery, health, publish, push, queues},
};

/// Builds the HTTP application over `state`.
pub fn app(state: AppState) -> Router {
    let (router, _) = routes(Some(&state)).split_for_parts();
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
        // Request spans carry method and path only. Headers are not logged,
        // and Authorization is marked sensitive in case a layer ever does
        // (keys are never logged: docs/security.md).
        // A 5xx's cause is logged once, where it is known (`ApiError::
        // log_cause`: internal errors at ERROR, a database outage once per
        // outage, `outage`); the trace layer's own line per 5xx would be an
        // ERROR per request during an outage, so it is DEBUG.
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(DefaultMakeSpan::new().include_headers(false))
                .on_failure(DefaultOnFailure::new().level(tracing::Level::DEBUG)),
        )
        .layer(SetSensitiveRequestHeadersLayer::new([
            header::AUTHORIZATION,
            header::PROXY_AUTHORIZATION,
            header::COOKIE,
        ]))
        .with_state(state)
}

/// Every route, each with its OpenAPI operation.
///
/// With `state`, every keyed route runs behind the guard of its capability
/// (auth, rate limit, scope, credit, metering): `auth::Caller` only comes
/// from the guard, so a keyed handler routed without `keyed` answers 500.
/// Without it (building the document only) the routes are left bare: the
/// layer does not change what the document says.
pub(crate) fn routes(state: Option<&AppState>) -> OpenApiRouter<AppState> {
    let keyed = |id: &str, (schemas, paths, route): UtoipaMethodRouter<AppState>| {
        let route = match state {
            Some(state) => route.layer(middleware::from_fn_with_state(
                Guarded::new(state, id),
                guard,
            )),
            None => route,
        };
        (schemas, paths, route)
    };
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .routes(keyed("queue.publish", routes!(publish::publish)))
        .routes(keyed(
            "queue.publish_batch",
            routes!(publish::publish_batch),
        ))
        .routes(keyed("queue.consume", routes!(consume::consume)))
        .routes(keyed("queue.ack", routes!(consume::ack)))
        .routes(keyed("queue.nack", routes!(consume::nack)))
        .routes(keyed("queue.extend", routes!(consume::extend)))
        .routes(keyed("queue.create", routes!(queues::create)))
        .routes(keyed("queue.list", routes!(queues::list)))
        .routes(keyed("queue.get", routes!(queues::get)))
        .routes(keyed("queue.delete", routes!(queues::delete_by_body)))
        .routes(keyed("queue.delete", routes!(queues::delete)))
        .routes(keyed("queue.stats", routes!(queues::stats)))
        .routes(keyed("queue.purge", routes!(queues::purge)))
        .routes(keyed("queue.dlq.redrive", routes!(queues::redrive)))
        .routes(keyed("queue.push_subscribe", routes!(push::subscribe)))
        .routes(keyed("queue.push_subscriptions", routes!(push::list)))
        .routes(keyed("queue.push_unsubscribe", routes!(push::unsubscribe)))
        .routes(keyed("account.balance", routes!(account::balance)))
        .routes(keyed("account.usage", routes!(account::usage)))
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
