//! The guard in front of every keyed route: who is calling, may they, and
//! what did it cost. In order:
//!
//! 1. **Key** ([`auth::bearer`], [`auth::authenticate`]): 401 if missing,
//!    unknown, revoked or expired. The one database round trip the guard
//!    makes.
//! 2. **Rate** ([`Limiter`](crate::accounts::Limiter)): 429 with
//!    `Retry-After` when the key's or the project's bucket is empty.
//! 3. **Scope**: 403 `FORBIDDEN` when the key's actions do not include the
//!    capability's. Queue patterns need the queue name, which is in the
//!    body: handlers check them through [`Caller::queue`].
//! 4. **Credit**: a capability priced per call reserves its price here (402
//!    `INSUFFICIENT_CREDIT` if the project cannot afford it); one priced
//!    per message reserves in its handler, once it knows how many.
//!
//! Then the handler runs with the [`Caller`] in the request's extensions:
//! it carries the capability, hence the per-call price its answer reports.
//! When the call ends, however it ends (answer, error, client gone), its
//! [`Call`](crate::caller::Call) is dropped and settles: the reservation is
//! released and the call, if it succeeded, is counted in this process's
//! usage with what it was charged. No metering touches the database here.
//!
//! The guard and [`crate::auth`] do not depend on each other both ways:
//! `auth` knows keys (shape, hash, lookup), this module knows calls.

use axum::{
    extract::{Request, State},
    http::{HeaderValue, StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
};
use onceq_types::{capability::CapabilityDef, scope::Action};

use crate::{
    ApiError, AppState, accounts::limiter::LimitScope, auth, caller::Caller, principal::Principal,
};

/// A guarded route's state: the app and the route's capability.
#[derive(Clone)]
pub struct Guarded {
    state: AppState,
    capability: &'static CapabilityDef,
}

impl Guarded {
    /// The guard of `capability`.
    pub fn new(state: &AppState, capability: &'static CapabilityDef) -> Self {
        Self {
            state: state.clone(),
            capability,
        }
    }
}

/// Takes one request from `key`'s and its project's rate limits: 429 with
/// `Retry-After` when either bucket is empty. Every request made with a key
/// passes here, through the API's guard or the dashboard's `Viewer`.
pub fn admit_rate(state: &AppState, key: &onceq_store::KeyRecord) -> Result<(), ApiError> {
    state
        .accounts
        .limiter
        .admit(
            &key.key_id,
            key.rate.or(state.config.key_rate),
            &key.project,
            state.config.project_rate,
            state.clock.now(),
        )
        .map_err(|l| {
            let what = match l.scope {
                LimitScope::Key => "this API key",
                LimitScope::Project => "this project",
            };
            ApiError::rate_limited(
                l.retry_after_secs,
                format!(
                    "too many requests for {what}; retry after {} s",
                    l.retry_after_secs
                ),
            )
        })
}

/// The middleware (see the module doc).
pub async fn guard(State(g): State<Guarded>, mut req: Request, next: Next) -> Response {
    // Owned, not `&req`: the body is not `Sync`, and this future must be
    // `Send` across the key lookup.
    let authorization = req.headers().get(header::AUTHORIZATION).cloned();
    let caller = match admit(&g, authorization).await {
        Ok(caller) => caller,
        Err(e) => return e.into_response(),
    };
    let call = caller.call.clone();
    if let Err(e) = call.reserve(call.per_call) {
        crate::webhooks::credit_refused(&g.state, &caller.project);
        return e.into_response();
    }
    req.extensions_mut().insert(caller);
    let res = next.run(req).await;
    // A publish reserves per message in its handler.
    if res.status() == StatusCode::PAYMENT_REQUIRED {
        crate::webhooks::credit_refused(&g.state, &call.project);
    }
    if res.status() == StatusCode::OK {
        call.succeed();
    }
    res
}

async fn admit(g: &Guarded, authorization: Option<HeaderValue>) -> Result<Caller, ApiError> {
    let state = &g.state;
    let key = auth::bearer(authorization.as_ref())?;
    let key = auth::authenticate(state, &key).await?;
    admit_rate(state, &key)?;
    let principal = Principal::new(key);
    let action = g.capability.action;
    if !principal.allows(action) {
        // The admin API's action is in no project key's `full`: say how to
        // get a key that holds it.
        let hint = match action {
            Action::Accounts => {
                "; use the operator's key (ONCEQ_API_KEY, or the first key the server made), or one made with `onceq keys create --actions full,accounts`"
            }
            _ => "",
        };
        return Err(ApiError::forbidden(format!(
            "this API key may not call {} (needs \"{}\"; the key allows: {}){hint}",
            g.capability.id,
            action.as_str(),
            principal.scope.actions
        )));
    }
    Ok(Caller::new(state, principal, g.capability))
}
