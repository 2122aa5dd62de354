//! The onceq server: Infrai's queue API (`docs/api.md`) over an
//! [`onceq_store::Store`].
//!
//! - [`mod@app`]: builds the axum [`Router`](axum::Router) from an [`AppState`];
//!   its keyed table pairs each route with its typed capability
//!   (`onceq_types::capability`), and a test checks the two agree.
//! - [`state`]: what every handler shares (store, clock, config, wake-ups).
//! - [`config`]: server settings and their defaults.
//! - [`clock`]: the injectable clock; tests move time instead of sleeping.
//! - [`routes`]: one module per capability group (publish, consume, lease:
//!   ack/nack/extend, queues, pause: pause/resume, push, account,
//!   discovery, health); each
//!   handler carries its `#[utoipa::path]`.
//! - [`messages`]: the message operations (publish, claim, ack, nack,
//!   redrive, promote, lease expiry, a queue's pause and resume) with their
//!   follow-ups (metrics, throughput,
//!   wake-ups) in one place, for routes, push, dashboard and reaper.
//! - [`envelope`]: the `{ok, data, error, metadata}` answer, the request id
//!   and latency measured around each call.
//! - [`request_id`]: the caller's `X-Request-Id` when it is a sane token,
//!   else a new one.
//! - [`telemetry`]: logs (text or JSON, `ONCEQ_LOG`/`RUST_LOG`) and traces
//!   (OTLP when `OTEL_*` asks): the process's subscriber, request spans.
//! - [`error`]: [`ApiError`], the one error type of the HTTP layer.
//! - [`extract`]: lenient JSON bodies whose errors name the field.
//! - [`validate`]: range and format checks of request fields.
//! - [`headers`]: message headers: their rule, stored form and way out.
//! - [`auth`]: Bearer keys: their shape, generation, hashes and lookup.
//! - [`principal`]: the key a request acts as and its scope checks, for
//!   the API and the dashboard alike.
//! - [`payloads`]: who may read a stored payload (`peek`): the one gate
//!   every answer and dashboard page showing one goes through.
//! - [`caller`]: the [`Caller`](caller::Caller) of a keyed route: its
//!   principal, its capability (hence its price) and its call's credit.
//! - [`guard`]: in front of every keyed route: key, rate limit, scope,
//!   credit, metering; makes the `Caller`.
//! - [`idempotency`]: `Idempotency-Key` on every mutating call: the call
//!   ledger (in the store) around the routes of the capabilities it lists.
//! - [`accounts`]: usage, credit and rate limits, in memory per process.
//! - [`admin`]: keys and projects of every project, the operations of the
//!   admin API and of `onceq keys`/`onceq projects` on the store.
//! - [`bootstrap`]: the keys a server starts with: `ONCEQ_API_KEY` (and
//!   retiring the one an earlier value made), or a first key written to a
//!   0600 file.
//! - [`input`]: each endpoint's body decoded and validated, without I/O
//!   (also what the fuzz targets drive).
//! - [`pricing`]: the price table behind `cost_usd` and discovery, keyed
//!   by capability.
//! - [`wakeup`]: wakes long-polling consumers when a message arrives.
//! - [`throughput`]: recent publish/ack/failure counts per queue, in memory,
//!   for the dashboard's charts.
//! - [`dashboard`]: the web dashboard under `/dashboard` (server-rendered
//!   HTML, vendored htmx, sign-in with an API key).
//! - [`maintenance`]: background services: lease expiry, dedupe-key purge,
//!   retention (of messages, and of finished ones kept by
//!   `completed_retention_seconds`), metrics upkeep, account sync, cron
//!   firing.
//! - [`cron`]: cron schedules: expressions and zones, create/update input,
//!   firing a run exactly once, the API's view of a schedule.
//! - [`metrics`]: Prometheus counters, histograms and gauges; `GET /metrics`.
//! - [`outage`]: one WARN per database outage, not one per failed request.
//! - [`openapi`]: the OpenAPI document generated from the handlers;
//!   `GET /openapi.json`.
//! - [`outbound`]: what every outbound delivery (push, webhooks, cron
//!   tasks) shares: the HTTP client, the SSRF guard, signatures, backoff,
//!   and the per-project, per-destination and per-process caps.
//! - [`push`]: push subscriptions: the dispatcher that POSTs a queue's
//!   messages to a URL, through [`outbound`].
//! - [`webhooks`]: account webhooks: events (`AppState::emit`), the
//!   per-server cache of who listens, the outbox dispatcher.
//! - [`serve`]: binds, bootstraps a key, runs until SIGTERM/Ctrl-C; the
//!   read timeouts.
//! - [`connections`]: the connections held, bounded in total (sized from
//!   the descriptor limit) and per address, the oldest idle one shed (or
//!   the longest-parked long poll cut short) for a new one.
//! - [`long_polls`]: the caps on long polls waiting, per key and project.
//! - [`unread_body`]: `Connection: close` on answers given before the
//!   request's body was read.
#![warn(missing_docs)]

pub mod accounts;
pub mod admin;
pub mod app;
pub mod auth;
pub mod bootstrap;
pub mod caller;
pub mod clock;
pub mod config;
pub mod connections;
pub mod cron;
pub mod dashboard;
pub mod envelope;
pub mod error;
pub mod extract;
pub mod guard;
pub mod headers;
pub mod idempotency;
pub mod input;
pub mod long_polls;
pub mod maintenance;
pub mod messages;
pub mod metrics;
pub mod openapi;
pub mod outage;
pub mod outbound;
pub mod payloads;
pub mod pricing;
pub mod principal;
pub mod push;
pub mod request_id;
pub mod routes;
pub mod serve;
pub mod state;
pub mod telemetry;
pub mod throughput;
pub mod unread_body;
pub mod validate;
pub mod wakeup;
pub mod webhooks;

pub use app::app;
pub use config::ServerConfig;
pub use error::ApiError;
pub use state::AppState;
