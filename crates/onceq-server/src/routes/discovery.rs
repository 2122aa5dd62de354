//! `GET /v1/discovery`: every endpoint with its price. No key needed.

use axum::extract::State;
use onceq_types::capability::{Capability, Discovery};

use crate::{AppState, envelope::Reply, openapi::responses::Ok};

/// `GET /v1/discovery`.
#[utoipa::path(
    get,
    path = "/v1/discovery",
    tag = "discovery",
    summary = "Every endpoint with its price",
    description = "No key needed.",
    security(()),
    responses(Ok<Discovery>)
)]
pub async fn discovery(State(state): State<AppState>) -> Reply<Discovery> {
    let capabilities = state
        .config
        .prices
        .billing()
        .into_iter()
        .map(|(def, billing)| Capability {
            id: def.id.to_owned(),
            method: def.method.to_owned(),
            path: def.path.to_owned(),
            billing,
        })
        .collect();
    Reply::new(Discovery {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        capabilities,
    })
}
