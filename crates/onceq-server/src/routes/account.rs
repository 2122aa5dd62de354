//! `GET /v1/account/usage` and `GET /v1/account/balance`: the key's
//! project's metering. Both read the store and add this server's usage not
//! written yet, under the flush gate, so one server answers exactly; with
//! several servers, what the others have not written yet (at most one
//! sync interval's worth) is missing.

use std::collections::BTreeMap;

use axum::extract::{Query, State, rejection::QueryRejection};
use onceq_store::{UsageQuery, UsageTotal};
use onceq_types::account::{Balance, Usage, UsageItem, micros_to_usd};
use serde::Deserialize;

use crate::{
    ApiError, AppState,
    caller::Caller,
    envelope::Reply,
    input,
    openapi::responses::{InvalidParams, Ok, Refused, StoreFailed, Unauthorized},
};

/// Query parameters of `GET /v1/account/usage`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UsageParams {
    /// Start of the range, RFC 3339 (inclusive); default the Unix epoch.
    #[param(format = DateTime)]
    pub from: Option<String>,
    /// End of the range, RFC 3339 (exclusive); default the end of the
    /// current minute.
    #[param(format = DateTime)]
    pub to: Option<String>,
}

/// `GET /v1/account/usage?from=..&to=..`.
#[utoipa::path(
    get,
    path = "/v1/account/usage",
    tag = "account",
    summary = "The project's usage per capability",
    description = "Calls, billable calls and cost per capability of the key's project in [from, to); includes this server's usage not written yet. With several servers, what the others have not written yet (at most one sync interval's worth) is missing.",
    params(UsageParams),
    responses(Ok<Usage>, InvalidParams, Unauthorized, Refused, StoreFailed)
)]
pub async fn usage(
    State(state): State<AppState>,
    caller: Caller,
    params: Result<Query<UsageParams>, QueryRejection>,
) -> Result<Reply<Usage>, ApiError> {
    let Query(params) = params.map_err(|e| ApiError::invalid(format!("query: {e}")))?;
    let (from, to) = input::usage_range(
        params.from.as_deref(),
        params.to.as_deref(),
        state.clock.now(),
    )?;
    let _gate = state.accounts.flush_gate.read().await;
    let stored = state
        .store()
        .usage_query(UsageQuery {
            project: caller.project.clone(),
            from,
            to,
        })
        .await
        .map_err(|e| ApiError::from_store(e, ""))?;
    let unwritten = state.accounts.ledger.unwritten(&caller.project, from, to);
    let mut by_cap: BTreeMap<String, UsageTotal> = BTreeMap::new();
    for t in stored.into_iter().chain(unwritten) {
        let e = by_cap
            .entry(t.capability.clone())
            .or_insert_with(|| UsageTotal {
                capability: t.capability.clone(),
                calls: 0,
                billable_calls: 0,
                cost_micros: 0,
            });
        e.calls += t.calls;
        e.billable_calls += t.billable_calls;
        e.cost_micros += t.cost_micros;
    }
    let total: u64 = by_cap.values().map(|t| t.cost_micros).sum();
    Ok(caller.reply(Usage {
        project: caller.project.clone(),
        from,
        to,
        items: by_cap
            .into_values()
            .map(|t| UsageItem {
                capability: t.capability,
                calls: t.calls,
                billable_calls: t.billable_calls,
                cost_usd: micros_to_usd(t.cost_micros),
            })
            .collect(),
        total_cost_usd: micros_to_usd(total),
    }))
}

/// `GET /v1/account/balance`.
#[utoipa::path(
    get,
    path = "/v1/account/balance",
    tag = "account",
    summary = "The project's credit left",
    description = "The project's credit limit, what it has spent and the difference (null without a credit limit).",
    responses(Ok<Balance>, Unauthorized, Refused, StoreFailed)
)]
pub async fn balance(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Reply<Balance>, ApiError> {
    let _gate = state.accounts.flush_gate.read().await;
    let project = state
        .store()
        .project_get(&caller.project)
        .await
        .map_err(|e| ApiError::from_store(e, ""))?;
    let (limit, stored) = project.map_or((None, 0), |p| (p.credit_limit_micros, p.spent_micros));
    let spent = stored + state.accounts.ledger.unwritten_spend(&caller.project);
    Ok(caller.reply(Balance {
        balance_usd: limit.map(|l| micros_to_usd(l.saturating_sub(spent))),
        currency: "USD".into(),
        credit_limit_usd: limit.map(micros_to_usd),
        spent_usd: micros_to_usd(spent),
    }))
}
