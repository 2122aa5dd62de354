//! `GET /v1/discovery`: every endpoint with its price; `GET
//! /v1/discovery/{capability_id}`: one of them. No key needed.

use axum::extract::{Path, State};
use onceq_types::{
    ErrorCode,
    capability::{Capability, Discovery},
};

use crate::{
    ApiError, AppState,
    envelope::Reply,
    openapi::responses::{InvalidParams, Ok},
};

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
    Reply::new(Discovery {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        capabilities: records(&state).collect(),
    })
}

/// `GET /v1/discovery/{capability_id}`.
#[utoipa::path(
    get,
    path = "/v1/discovery/{capability_id}",
    operation_id = "discovery_get",
    tag = "discovery",
    summary = "One endpoint with its price",
    description = "The record /v1/discovery lists for this capability id (queue.publish, queue.consume, ...). No key needed; an unknown id is 404 NOT_FOUND.",
    security(()),
    params(("capability_id" = String, Path, description = "A capability id, as /v1/discovery lists them.", min_length = 1, max_length = 255)),
    responses(Ok<Capability>, InvalidParams, CapabilityMissing)
)]
pub async fn discovery_get(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Reply<Capability>, ApiError> {
    records(&state)
        .find(|c| c.id == id)
        .map(Reply::new)
        .ok_or_else(|| {
            ApiError::new(ErrorCode::NotFound, format!("no capability {id:?}"))
                .with_hint("GET /v1/discovery lists every capability id")
        })
}

/// Every capability's record, in the catalogue's order.
fn records(state: &AppState) -> impl Iterator<Item = Capability> {
    state
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
}

/// 404 of `discovery_get`.
pub struct CapabilityMissing;

impl utoipa::IntoResponses for CapabilityMissing {
    fn responses() -> std::collections::BTreeMap<
        String,
        utoipa::openapi::RefOr<utoipa::openapi::response::Response>,
    > {
        crate::openapi::responses::not_found_of("no capability with that id")
    }
}
