//! The seed's export app, rebuilt on onceq (see README.md beside this file).
//!
//! Two processes, each safe to kill at any instant and start again:
//!
//! - `exports api`: `POST /api/exports` behind the `Idempotency-Key` layer
//!   (key 1); it publishes the job with the request's key as the publish
//!   key (key 2) and the job fact `export:<key>` in the payload, and
//!   answers the seed's `202 {status: "queued", message_id}`.
//! - `exports worker`: consumes the jobs with onceq's worker runtime, which
//!   claims the job fact (key 3) and commits the `exports` row in the same
//!   transaction as the fact's `done` mark.
//!
//! Modules: [`api`], [`worker`], [`db`] (pool and the `exports` table),
//! [`naive`] (the seed's unprotected worker, kept only so the chaos run can
//! show that its checker catches what it lets through).

mod api;
mod db;
mod naive;
mod worker;

use clap::{Parser, Subcommand};

/// The seed's export app on onceq.
#[derive(Debug, Parser)]
#[command(name = "exports")]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// The app's PostgreSQL database (ledger, job facts, exports).
    #[arg(
        long,
        env = "DATABASE_URL",
        global = true,
        default_value = "postgres://localhost/exports"
    )]
    database_url: String,
    /// The onceq server.
    #[arg(
        long,
        env = "ONCEQ_URL",
        global = true,
        default_value = "http://127.0.0.1:8787"
    )]
    onceq_url: String,
    /// Its API key.
    #[arg(
        long,
        env = "ONCEQ_API_KEY",
        global = true,
        hide_env_values = true,
        default_value = ""
    )]
    onceq_api_key: String,
    /// The queue jobs go through.
    #[arg(
        long,
        env = "EXPORTS_QUEUE",
        global = true,
        default_value = "api-enqueue-jobs"
    )]
    queue: String,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve POST /api/exports.
    Api(api::ApiArgs),
    /// Build exports.
    Worker(worker::WorkerArgs),
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("EXPORTS_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    anyhow::ensure!(!cli.onceq_api_key.is_empty(), "set ONCEQ_API_KEY");
    let pool = db::pool(&cli.database_url)?;
    let client = onceq::Client::new(&cli.onceq_url, &cli.onceq_api_key)?;
    match cli.command {
        Command::Api(args) => api::run(args, pool, client, cli.queue).await,
        Command::Worker(args) => worker::run(args, pool, client, cli.queue).await,
    }
}

/// Resolves on SIGTERM or Ctrl-C.
pub async fn shutdown_signal() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}
