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
//! Then the handler runs with the [`Caller`] in the request's extensions.
//! When the call ends, however it ends (answer, error, client gone), its
//! [`Call`] is dropped and settles: the reservation is released and the
//! call, if it succeeded, is counted in this process's usage with what it
//! was charged. No metering touches the database here.

use std::sync::{
    Arc,
    atomic::{AtomicBool, AtomicU64, Ordering},
};

use axum::{
    extract::{Request, State},
    http::{HeaderValue, StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
};
use onceq_types::{
    ErrorCode,
    account::micros_to_usd,
    capability::{self, CapabilityDef},
};

use crate::{
    ApiError, AppState,
    accounts::{
        Accounts,
        ledger::{Counts, OverLimit},
        limiter::LimitScope,
    },
    auth::{self, Caller},
    clock::Clock,
};

tokio::task_local! {
    /// The per-call price of the call in progress, for its answer's
    /// `cost_usd` (0 outside a guarded call).
    static CALL_PRICE_USD: f64;
}

/// The `cost_usd` a successful answer reports unless its handler says
/// otherwise: the capability's per-call price.
pub fn call_price_usd() -> f64 {
    CALL_PRICE_USD.try_with(|p| *p).unwrap_or(0.0)
}

/// A guarded route's state: the app and the route's capability.
#[derive(Clone)]
pub struct Guarded {
    state: AppState,
    capability: &'static CapabilityDef,
}

impl Guarded {
    /// The guard of capability `id` (a bug if unknown: panics at startup).
    pub fn new(state: &AppState, id: &str) -> Self {
        let capability = capability::capability(id)
            .unwrap_or_else(|| panic!("route guarded with unknown capability {id:?}"));
        Self {
            state: state.clone(),
            capability,
        }
    }
}

/// A call in progress: what it holds and what it was charged.
#[derive(Debug)]
pub struct Call {
    accounts: Arc<Accounts>,
    clock: Clock,
    project: String,
    capability: &'static CapabilityDef,
    reserved: AtomicU64,
    charged: AtomicU64,
    succeeded: AtomicBool,
}

impl Call {
    pub(crate) fn reserve(&self, micros: u64) -> Result<(), ApiError> {
        self.accounts
            .ledger
            .reserve(&self.project, micros)
            .map_err(|o| insufficient_credit(&self.project, o))?;
        self.reserved.fetch_add(micros, Ordering::Relaxed);
        Ok(())
    }

    pub(crate) fn charge(&self, micros: u64) {
        self.charged.fetch_add(micros, Ordering::Relaxed);
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        let charged = *self.charged.get_mut();
        let ok = *self.succeeded.get_mut() || charged > 0;
        self.accounts.ledger.settle(
            &self.project,
            self.capability.id,
            self.clock.now(),
            *self.reserved.get_mut(),
            Counts {
                calls: u64::from(ok),
                billable_calls: u64::from(charged > 0),
                cost_micros: charged,
            },
        );
    }
}

fn insufficient_credit(project: &str, o: OverLimit) -> ApiError {
    ApiError::new(
        ErrorCode::InsufficientCredit,
        format!(
            "project {project:?} has used its credit ({} of {} USD); nothing was done",
            micros_to_usd(o.spent),
            micros_to_usd(o.limit)
        ),
    )
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
    let per_call = match g.capability.unit {
        "call" => g.state.config.prices.micros(g.capability.id),
        _ => 0,
    };
    if let Err(e) = call.reserve(per_call) {
        return e.into_response();
    }
    req.extensions_mut().insert(caller);
    let res = CALL_PRICE_USD
        .scope(micros_to_usd(per_call), next.run(req))
        .await;
    if res.status() == StatusCode::OK {
        call.succeeded.store(true, Ordering::Relaxed);
        call.charge(per_call);
    }
    res
}

async fn admit(g: &Guarded, authorization: Option<HeaderValue>) -> Result<Caller, ApiError> {
    let state = &g.state;
    let key = auth::bearer(authorization.as_ref())?;
    let key = auth::authenticate(state, &key).await?;
    let now = state.clock.now();
    state
        .accounts
        .limiter
        .admit(
            &key.key_id,
            key.rate.or(state.config.key_rate),
            &key.project,
            state.config.project_rate,
            now,
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
        })?;
    let action = g.capability.action;
    if !key.scope.actions.allows(action) {
        return Err(ApiError::forbidden(format!(
            "this API key may not call {} (needs \"{}\"; the key allows: {})",
            g.capability.id,
            action.as_str(),
            key.scope.actions
        )));
    }
    let call = Arc::new(Call {
        accounts: state.accounts.clone(),
        clock: state.clock.clone(),
        project: key.project.clone(),
        capability: g.capability,
        reserved: AtomicU64::new(0),
        charged: AtomicU64::new(0),
        succeeded: AtomicBool::new(false),
    });
    Ok(Caller {
        project: key.project,
        key_id: key.key_id,
        scope: key.scope,
        call,
    })
}
