//! `GET /openapi.json`: the OpenAPI 3.1 document of the whole API,
//! generated from the code (the handlers' `#[utoipa::path]` annotations and
//! the wire types of `onceq-types`, feature `openapi`), so it cannot drift
//! from what the router serves.
//!
//! - [`responses`]: the answers an annotation lists: `Ok<T>` / `OkList<T>`
//!   (the `{ok: true, data, error: null, metadata}` envelope around `T`) and
//!   one type per error status, each carrying the codes it can have.
//! - `idempotency`: the `Idempotency-Key` header and its 409/422 answers on
//!   the operations of the call ledger's capabilities.
//! - [`params`]: the `{queue}` path parameter, and `push_unsubscribe`'s
//!   `{queue}/{subscription_id}`.
//!
//! # Documenting a handler (the one pattern)
//!
//! 1. Annotate it, next to the handler:
//!
//!    ```text
//!    #[utoipa::path(post, path = "/v1/queue/ack", tag = "messages",
//!        request_body = Ack,
//!        responses(Ok<Acked>, InvalidParams, Unauthorized, TooLarge, StoreFailed))]
//!    pub async fn ack(..) -> Result<Reply<Acked>, ApiError>
//!    ```
//!
//!    One method per annotation: the operation id (the handler's name
//!    unless `operation_id = ".."`) names the function client generators
//!    make, and must be unique in the document (test
//!    `operation_ids_are_unique`). A path served at two methods has two
//!    handlers, the second calling the first (`queues::delete_post`).
//!    List every status the handler can answer: 400 when it validates
//!    input, 401 when it takes a `Caller`, 413 when it reads a `Body`, 404
//!    when it names a queue that must exist, 500/503 when it calls the
//!    store (auth does). Endpoints without a key add `security(())`.
//! 2. Route it in `app::routes()` with `.routes(routes!(module::handler))`
//!    (wrapped in `keyed("capability.id", ..)` when it takes a `Caller`),
//!    never `.route(..)`: a raw route is served but not documented, and the
//!    test `openapi::every_route_is_documented` fails. The one exception
//!    is the dashboard (`dashboard::routes()`, merged in `app()`): HTML
//!    pages for people, deliberately not in the document.
//! 3. A new wire type derives `ToSchema` under the `openapi` feature in
//!    `onceq-types` and is listed in [`ApiDoc`]'s `components(schemas(..))`
//!    (types only named inside `responses(..)` are not collected on their
//!    own; the test `every_ref_resolves` catches a missing one). A value
//!    of several types is a `oneOf` of typed schemas, never a `type` list
//!    (`onceq_types::openapi::payload`; test `type_lists_are_nullable_only`).
//! 4. `scripts/openapi-check` (CI) runs openapi-spec-validator,
//!    openapi-typescript + `tsc --strict` and openapi-python-client on the
//!    served document.

pub(crate) mod idempotency;
pub mod params;
pub mod responses;

use std::sync::LazyLock;

use axum::{
    http::{HeaderValue, header},
    response::{IntoResponse, Response},
};
use onceq_types::{
    Attempt, AttemptOutcome, MessageDetail, MessageState, reply::Cancelled, request::Cancel,
};
use onceq_types::{
    ConsumedMessage, ErrorBody, ErrorCode, MessageStatus, Metadata, PublishedMessage, QueueRecord,
    QueueStats, QueueType, RetryBackoff,
    account::{Balance, Usage, UsageItem},
    admin::{
        CreatedKey, KeyCreate, KeyInfo, KeyLimits, KeyRevoke, KeyRotate, ProjectInfo, ProjectLimits,
    },
    capability::{Billing, Capability, Discovery},
    cron::{CronCreate, CronDeleted, CronJob, CronRun, CronUpdate, OverlapPolicy, RunOutcome},
    push::{PushSubscribe, PushSubscription, PushUnsubscribed},
    reply::{
        AckBatchResult, AckFailed, AckSucceeded, Acked, Consumed, Deleted, Extended, Nacked,
        Paused, Purged, Redriven,
    },
    request::{Redrive, RetryBackoffBody, UpdateQueue},
    webhook::{RegisterWebhook, Webhook, WebhookAttempt, WebhookDeleted},
};
use utoipa::{
    Modify, OpenApi,
    openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme},
};

/// The document's root: info, security schemes, tags, shared schemas. The
/// paths come from the router (`app::routes()`).
#[derive(OpenApi)]
#[openapi(
    info(
        title = "onceq",
        description = "A self-hosted background-job queue serving Infrai's hosted queue API. Every JSON answer is the envelope {ok, data, error, metadata}; errors carry a stable code (docs/api.md).",
        license(name = "MIT OR Apache-2.0"),
    ),
    modifiers(&SecuritySchemes),
    security(("bearer" = [])),
    components(schemas(
        ErrorBody, ErrorCode, Metadata, MessageStatus, PublishedMessage, ConsumedMessage,
        QueueRecord, QueueStats, QueueType, RetryBackoff, RetryBackoffBody, Acked, Nacked, Extended, Purged, Paused, Deleted,
        Redriven, Discovery, Capability, Billing, Redrive, PushSubscribe, PushSubscription,
        PushUnsubscribed, Usage, UsageItem, Balance, UpdateQueue, MessageDetail, MessageState,
        KeyInfo, CreatedKey, ProjectInfo, KeyCreate, KeyRevoke, KeyRotate, KeyLimits, ProjectLimits,
        CronCreate, CronUpdate, CronJob, CronRun, CronDeleted, OverlapPolicy, RunOutcome,
        RegisterWebhook, Webhook, WebhookAttempt, WebhookDeleted,
        Attempt, AttemptOutcome, Cancel, Cancelled, AckBatchResult, AckSucceeded, AckFailed,
        Consumed,
    )),
    tags(
        (name = "messages", description = "Publishing and consuming messages."),
        (name = "queues", description = "Managing queues and their dead-letter queues."),
        (name = "push", description = "Push subscriptions: the server POSTs a queue's messages to a webhook, signed (docs/api.md, section 5)."),
        (name = "cron", description = "Cron schedules: each run published exactly once into a queue (docs/cron.md)."),
        (name = "webhooks", description = "Account webhooks: the project's events POSTed to its endpoints, signed like push deliveries, at least once (docs/api.md, \"Account webhooks\")."),
        (name = "account", description = "The key's project's metering: usage per capability and the credit left (docs/security.md)."),
        (name = "admin", description = "Keys and projects of every project, for a key with the accounts action (docs/api.md, section 6)."),
        (name = "discovery", description = "What the server offers and what it costs."),
        (name = "operations", description = "Health, readiness, metrics and this document."),
    )
)]
pub struct ApiDoc;

struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "An API key of a project: Authorization: Bearer <key>. Every queue the call touches belongs to that project.",
                    ))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "metrics_token",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "The token of onceq serve --metrics-token, when the server sets one.",
                    ))
                    .build(),
            ),
        );
    }
}

/// The whole document, as the router builds it.
pub fn document() -> utoipa::openapi::OpenApi {
    let mut doc = crate::app::routes(None).into_openapi();
    doc.info.version = env!("CARGO_PKG_VERSION").to_owned();
    doc
}

static JSON: LazyLock<Vec<u8>> =
    LazyLock::new(|| serde_json::to_vec(&document()).expect("the OpenAPI document serialises"));

/// `GET /openapi.json`.
#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "operations",
    summary = "This document",
    description = "The OpenAPI 3.1 description of every endpoint, body and error, generated from the server's code. No key needed.",
    security(()),
    responses((status = 200, description = "The document.", body = Object, content_type = "application/json"))
)]
pub async fn openapi_json() -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        JSON.as_slice(),
    )
        .into_response()
}
