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
use onceq_types::{
    ErrorCode,
    capability::{self as cap, CapabilityDef},
};
use tower_http::sensitive_headers::SetSensitiveRequestHeadersLayer;
use utoipa::OpenApi;
use utoipa_axum::{
    router::{OpenApiRouter, UtoipaMethodRouter},
    routes,
};

use crate::{
    ApiError, AppState, dashboard, envelope,
    guard::{Guarded, guard},
    idempotency, metrics, openapi,
    routes::{
        account, ack_batch, admin, consume, cron, discovery, health, lease, message, pause,
        publish, push, queues, webhooks,
    },
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
        // The request's id, latency and span (method, route, status; the
        // caller's traceparent continued). Headers are not logged, and
        // Authorization is marked sensitive in case a layer ever does (keys
        // are never logged: docs/security.md). A 5xx's cause is logged once,
        // where it is known (`ApiError::log_cause`: internal errors at
        // ERROR, a database outage once per outage, `outage`).
        .layer(middleware::from_fn(envelope::track_request))
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
/// (auth, rate limit, scope, credit, metering): a [`Caller`](crate::caller::Caller)
/// only comes from the guard, so a keyed handler routed without one
/// answers 500. Without it (building the document only) the routes are
/// left bare: the layer does not change what the document says.
pub(crate) fn routes(state: Option<&AppState>) -> OpenApiRouter<AppState> {
    let mut router = OpenApiRouter::with_openapi(openapi::ApiDoc::openapi());
    for (capability, (schemas, mut paths, route)) in keyed() {
        if idempotency::is_idempotent(capability) {
            openapi::idempotency::document(&mut paths);
        }
        let route = match state {
            Some(state) => {
                // Inside the guard: the call ledger needs the caller.
                let route = if idempotency::is_idempotent(capability) {
                    route.layer(middleware::from_fn_with_state(
                        state.clone(),
                        idempotency::guard_call,
                    ))
                } else {
                    route
                };
                route.layer(middleware::from_fn_with_state(
                    Guarded::new(state, capability),
                    guard,
                ))
            }
            None => route,
        };
        router = router.routes((schemas, paths, route));
    }
    router
        .routes(routes!(discovery::discovery))
        .routes(routes!(discovery::discovery_get))
        .routes(routes!(health::healthz))
        .routes(routes!(health::readyz))
        .routes(routes!(metrics::scrape::metrics))
        .routes(routes!(openapi::openapi_json))
}

/// The keyed routes, each with the capability it is guarded, priced and
/// metered as (`tests::router_matches_the_capability_table` checks this
/// against the catalogue).
fn keyed() -> Vec<(&'static CapabilityDef, UtoipaMethodRouter<AppState>)> {
    vec![
        (&cap::PUBLISH, routes!(publish::publish)),
        (&cap::PUBLISH_BATCH, routes!(publish::publish_batch)),
        (&cap::CONSUME, routes!(consume::consume)),
        (&cap::ACK, routes!(lease::ack)),
        (&cap::ACK_BATCH, routes!(ack_batch::ack_batch)),
        (&cap::NACK, routes!(lease::nack)),
        (&cap::EXTEND, routes!(lease::extend)),
        (&cap::CREATE, routes!(queues::create)),
        (&cap::QUEUE_UPDATE, routes!(queues::update)),
        (&cap::QUEUE_PAUSE, routes!(pause::pause)),
        (&cap::QUEUE_RESUME, routes!(pause::resume)),
        (&cap::LIST, routes!(queues::list)),
        (&cap::GET, routes!(queues::get)),
        (&cap::DELETE, routes!(queues::delete_by_body)),
        (&cap::DELETE, routes!(queues::delete)),
        (&cap::DELETE, routes!(queues::delete_post)),
        (&cap::STATS, routes!(queues::stats)),
        (&cap::MESSAGE_GET, routes!(message::get)),
        (&cap::CANCEL, routes!(message::cancel)),
        (&cap::PURGE, routes!(queues::purge)),
        (&cap::REDRIVE, routes!(queues::redrive)),
        (&cap::PUSH_SUBSCRIBE, routes!(push::subscribe)),
        (&cap::PUSH_SUBSCRIPTIONS, routes!(push::list)),
        (&cap::PUSH_UNSUBSCRIBE, routes!(push::unsubscribe)),
        (&cap::PUSH_UNSUBSCRIBE, routes!(push::unsubscribe_post)),
        (&cap::CRON_CREATE, routes!(cron::create)),
        (&cap::CRON_LIST, routes!(cron::list)),
        (&cap::CRON_GET, routes!(cron::get)),
        (&cap::CRON_UPDATE, routes!(cron::update)),
        (&cap::CRON_PAUSE, routes!(cron::pause)),
        (&cap::CRON_RESUME, routes!(cron::resume)),
        (&cap::CRON_DELETE, routes!(cron::delete)),
        (&cap::CRON_DELETE, routes!(cron::delete_post)),
        (&cap::WEBHOOK_REGISTER, routes!(webhooks::register)),
        (&cap::WEBHOOK_LIST, routes!(webhooks::list)),
        (&cap::WEBHOOK_DELIVERIES, routes!(webhooks::deliveries)),
        (&cap::WEBHOOK_TEST, routes!(webhooks::test)),
        (&cap::WEBHOOK_DELETE, routes!(webhooks::delete)),
        (&cap::WEBHOOK_DELETE, routes!(webhooks::delete_post)),
        (&cap::BALANCE, routes!(account::balance)),
        (&cap::USAGE, routes!(account::usage)),
        (&cap::ADMIN_KEYS, routes!(admin::keys_list)),
        (&cap::ADMIN_KEYS_CREATE, routes!(admin::keys_create)),
        (&cap::ADMIN_KEYS_REVOKE, routes!(admin::keys_revoke)),
        (&cap::ADMIN_KEYS_ROTATE, routes!(admin::keys_rotate)),
        (&cap::ADMIN_KEYS_LIMITS, routes!(admin::keys_limits)),
        (&cap::ADMIN_PROJECTS, routes!(admin::projects_list)),
        (&cap::ADMIN_PROJECTS_LIMITS, routes!(admin::projects_limits)),
    ]
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use onceq_types::capability::{CAPABILITIES, UNKEYED};
    use utoipa::openapi::path::PathItem;

    use super::*;

    fn methods(item: &PathItem) -> Vec<&'static str> {
        [
            ("GET", &item.get),
            ("POST", &item.post),
            ("PUT", &item.put),
            ("DELETE", &item.delete),
            ("PATCH", &item.patch),
        ]
        .into_iter()
        .filter(|(_, op)| op.is_some())
        .map(|(m, _)| m)
        .collect()
    }

    /// Every (method, path) a set of routes serves.
    fn served(paths: &utoipa::openapi::Paths) -> BTreeSet<(&'static str, String)> {
        paths
            .paths
            .iter()
            .flat_map(|(path, item)| methods(item).into_iter().map(|m| (m, path.clone())))
            .collect()
    }

    /// The catalogue in `onceq-types` (what discovery lists, prices and
    /// meters) and the router agree: each keyed capability is served at
    /// its method and path, behind its own guard; every keyed route is
    /// that of its capability (or a documented alias of it); and every
    /// other `/v1` route needs no key.
    #[test]
    fn router_matches_the_capability_table() {
        // Served as well as the catalogue's method and path, by the same
        // capability (`docs/api.md`).
        let aliases: BTreeSet<(&str, &str)> = cap::ALIASES.iter().copied().collect();
        let mut guarded = BTreeSet::new();
        for (capability, (_, paths, _)) in keyed() {
            for (method, path) in served(&paths) {
                let own = method == capability.method && path == capability.path;
                assert!(
                    own || aliases.contains(&(method, path.as_str())),
                    "{method} {path} is guarded as {}, which is {} {}",
                    capability.id,
                    capability.method,
                    capability.path
                );
                guarded.insert((capability.id, method, path));
            }
        }
        for c in CAPABILITIES.iter().filter(|c| !UNKEYED.contains(c)) {
            assert!(
                guarded.contains(&(c.id, c.method, c.path.to_owned())),
                "{} ({} {}) is not routed behind its guard",
                c.id,
                c.method,
                c.path
            );
        }
        let (_, doc) = routes(None).split_for_parts();
        let keyed: BTreeSet<_> = guarded.into_iter().map(|(_, m, p)| (m, p)).collect();
        for (method, path) in served(&doc.paths) {
            if path.starts_with("/v1/") && !keyed.contains(&(method, path.clone())) {
                assert!(
                    UNKEYED
                        .iter()
                        .any(|c| (c.method, c.path) == (method, path.as_str())),
                    "a /v1 route without a capability: {method} {path}"
                );
            }
        }
    }
}
