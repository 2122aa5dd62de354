//! `POST /api/exports`: claim the key, publish, record — never the work.
//!
//! The layer does the claim and the record; the handler only publishes,
//! with the request's key as the publish key so that a rerun after a crash
//! (a takeover of an expired claim) gets the first message back instead of
//! queueing a second one.

use std::{net::SocketAddr, sync::Arc, time::Duration};

use axum::{Json, Router, extract::State, http::StatusCode, routing::post};
use clap::Args;
use onceq::{
    PublishOptions, RetryPolicy,
    idempotency::{IdempotencyKey, IdempotencyLayer, Ledger, PgLedger, spawn_purger},
};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Flags of `exports api`.
#[derive(Debug, Args)]
pub struct ApiArgs {
    /// Where to listen.
    #[arg(long, env = "LISTEN", default_value = "127.0.0.1:3000")]
    listen: SocketAddr,
    /// How long a claimed key stays claimed before a retry may take it over.
    #[arg(long, env = "EXPORTS_LEASE_SECS", default_value_t = 30)]
    lease_secs: u64,
    /// For the chaos run's teeth only: serve the route WITHOUT the
    /// Idempotency-Key layer, as the seed would without its ledger.
    // On/off as onceq's own settings spell it (`1`, `true`, `yes`, `on`,
    // any case; the flag alone means on): clap's boolish parser.
    #[arg(
        long,
        env = "EXPORTS_UNSAFE_SKIP_LEDGER",
        hide = true,
        value_parser = clap::builder::BoolishValueParser::new(),
        action = clap::ArgAction::Set,
        num_args = 0..=1,
        default_missing_value = "true",
        default_value = "false"
    )]
    unsafe_skip_ledger: bool,
}

#[derive(Clone)]
struct AppState {
    client: onceq::Client,
    queue: Arc<str>,
}

/// The seed's request body.
#[derive(Debug, Deserialize, serde::Serialize)]
struct ExportRequest {
    tenant: String,
    format: String,
}

pub async fn run(
    args: ApiArgs,
    pool: deadpool_postgres::Pool,
    client: onceq::Client,
    queue: String,
) -> anyhow::Result<()> {
    // Bounded retries: a request should answer within seconds; the caller
    // retries with the same key anyway.
    let client = client.with_retry(RetryPolicy {
        max_attempts: 3,
        base_delay: Duration::from_millis(100),
        max_delay: Duration::from_secs(1),
    });
    let state = AppState {
        client,
        queue: queue.into(),
    };
    let shutdown = CancellationToken::new();
    let route = Router::new().route("/api/exports", post(create_export));
    let app = if args.unsafe_skip_ledger {
        tracing::warn!("serving WITHOUT the Idempotency-Key layer (chaos teeth mode)");
        route.with_state(state)
    } else {
        let ledger: Arc<dyn Ledger> = Arc::new(PgLedger::new(pool).await?);
        spawn_purger(
            ledger.clone(),
            Duration::from_secs(300),
            Default::default(),
            shutdown.clone(),
        );
        route
            .route_layer(IdempotencyLayer::new(ledger).lease(Duration::from_secs(args.lease_secs)))
            .with_state(state)
    };
    let listener = tokio::net::TcpListener::bind(args.listen).await?;
    tracing::info!(addr = %listener.local_addr()?, "exports api listening");
    axum::serve(listener, app)
        .with_graceful_shutdown(crate::shutdown_signal())
        .await?;
    shutdown.cancel();
    Ok(())
}

async fn create_export(
    State(state): State<AppState>,
    key: Option<IdempotencyKey>,
    body: Result<Json<ExportRequest>, axum::extract::rejection::JsonRejection>,
) -> (StatusCode, Json<Value>) {
    let Json(body) = match body {
        Ok(b) => b,
        Err(e) => {
            return (
                StatusCode::BAD_REQUEST,
                Json(
                    json!({"error": format!("body must be {{\"tenant\": string, \"format\": string}}: {e}")}),
                ),
            );
        }
    };
    // Without the layer (teeth mode) every request gets a fresh key, as a
    // route with no key at all would: each retry becomes a new job.
    let key = key
        .map(|k| k.0)
        .unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
    let payload =
        json!({"tenant": body.tenant, "format": body.format, "job_fact": format!("export:{key}")});
    let opts = PublishOptions {
        idempotency_key: Some(key),
        ..Default::default()
    };
    match state.client.publish(&state.queue, &payload, opts).await {
        Ok(published) => (
            StatusCode::ACCEPTED,
            Json(json!({"status": "queued", "message_id": published.message.message_id})),
        ),
        // A 5xx is never recorded by the layer: the claim is released and
        // the caller's retry publishes again (deduped by the same key).
        Err(e) => {
            tracing::warn!(error = %e, "publish failed");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({"error": e.to_string()})),
            )
        }
    }
}
