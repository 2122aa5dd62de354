//! Subcommands. `serve` works on the store (creating it); `keys` and
//! `projects` on an existing store (same `--database-url` / `--data-dir` as
//! the server) or, with `--url`, through its admin API (`admin`); the rest
//! talk to a running server over HTTP with the `onceq` client: `publish`/`bulk`,
//! `consume`, `lease_cmds` (ack, nack, extend), `stats`/`watch`, `depths`
//! (`queues`), `queue` (create, update, delete, get), `message` (get),
//! `purge`, `dlq` (list, peek, redrive), `cron` (create, list, get,
//! delete, pause, resume), `webhooks` (register, list, deliveries, test,
//! delete), `bench`, `health`. On/off settings
//! parse with `switch`.

mod ack_batch;
mod admin;
mod bench;
mod bulk;
mod client_cmds;
mod cron;
mod depths;
mod dlq;
mod health;
mod keys;
mod lease_cmds;
mod message;
mod projects;
mod purge;
mod queue;
mod serve;
mod switch;
mod watch;
mod webhooks;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// onceq: background jobs, effectively once.
#[derive(Debug, Parser)]
#[command(name = "onceq", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// How log lines are written: text, or json (one object per line).
    /// Which lines: ONCEQ_LOG, else RUST_LOG (default info).
    #[arg(
        long,
        global = true,
        env = "ONCEQ_LOG_FORMAT",
        default_value = "text",
        value_name = "text|json"
    )]
    log_format: onceq_server::telemetry::LogFormat,
}

impl Cli {
    /// The `--log-format` asked for.
    pub fn log_format(&self) -> onceq_server::telemetry::LogFormat {
        self.log_format
    }

    /// The runtime's worker threads: `serve`'s `--worker-threads`; none
    /// (tokio's default) for the other commands.
    pub fn worker_threads(&self) -> Option<std::num::NonZeroUsize> {
        match &self.command {
            Command::Serve(args) => Some(args.worker_threads()),
            _ => None,
        }
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the queue server.
    Serve(serve::ServeArgs),
    /// Manage API keys (works while the server runs).
    #[command(subcommand)]
    Keys(keys::KeysCmd),
    /// Projects' credit limits and rate limits (works while the server runs).
    #[command(subcommand)]
    Projects(projects::ProjectsCmd),
    /// Publish one message, or one per line of a file (--file).
    Publish(client_cmds::PublishArgs),
    /// Take messages from a queue (and ack them with --ack).
    Consume(client_cmds::ConsumeArgs),
    /// Ack a message you hold: it is done and deleted.
    Ack(lease_cmds::AckArgs),
    /// Ack up to 10 messages you hold in one call (ID:RECEIPT each).
    AckBatch(ack_batch::AckBatchArgs),
    /// Give a message you hold back (--delay), or dead-letter it.
    Nack(lease_cmds::NackArgs),
    /// Make the lease on a message you hold longer (a heartbeat).
    Extend(lease_cmds::ExtendArgs),
    /// Show a queue's counts (--watch: keep refreshing).
    Stats(client_cmds::StatsArgs),
    /// List queues with their depths: held, available, in flight, delayed, dead-lettered.
    Queues(depths::QueuesArgs),
    /// Create, update, delete or show one queue.
    #[command(subcommand)]
    Queue(queue::QueueCmd),
    /// Show one message by id, wherever it is (queue or dead-letter queue).
    #[command(subcommand)]
    Message(message::MessageCmd),
    /// Remove a waiting, delayed or in-flight message from its queue.
    Cancel(message::CancelArgs),
    /// Delete every message a queue holds (asks first; --yes to skip).
    Purge(purge::PurgeArgs),
    /// Dead letters: list the DLQs, peek at one, redrive it.
    #[command(subcommand)]
    Dlq(dlq::DlqCmd),
    /// Cron schedules: create, list, get, delete, pause, resume.
    #[command(subcommand)]
    Cron(cron::CronCmd),
    /// Account webhooks: register, list, deliveries, test, delete.
    #[command(subcommand)]
    Webhooks(webhooks::WebhooksCmd),
    /// Run the peers' benchmark workload against a running server.
    Bench(bench::BenchArgs),
    /// Check that a server is ready (its /readyz); exit 1 if not.
    Health(health::HealthArgs),
}

/// Where the store is: shared by `serve`, `keys` and `projects`.
#[derive(Debug, Clone, Args)]
pub struct StoreArgs {
    /// PostgreSQL URL (postgres://..., read as libpq reads it: several
    /// hosts, sslmode, sslrootcert, ...). Without it the embedded store is
    /// used.
    #[arg(long, env = "DATABASE_URL")]
    pub database_url: Option<String>,
    /// Directory of the embedded store.
    #[arg(long, env = "ONCEQ_DATA_DIR", default_value = "./onceq-data")]
    pub data_dir: PathBuf,
    #[command(flatten)]
    pub db_tls: DbTlsArgs,
}

/// TLS to PostgreSQL when the database URL does not say (libpq's
/// environment variables; the URL's own parameters win).
#[derive(Debug, Clone, Default, Args)]
pub struct DbTlsArgs {
    /// disable, prefer (the default), require, verify-ca or verify-full.
    #[arg(long, env = "PGSSLMODE", value_name = "MODE")]
    pub db_sslmode: Option<String>,
    /// PEM file of the CAs trusted for verify-ca/verify-full, or `system`
    /// (the system's roots, the default).
    #[arg(long, env = "PGSSLROOTCERT", value_name = "FILE")]
    pub db_sslrootcert: Option<String>,
    /// PEM file of the client certificate (with --db-sslkey).
    #[arg(long, env = "PGSSLCERT", value_name = "FILE")]
    pub db_sslcert: Option<String>,
    /// PEM file of the client certificate's key.
    #[arg(long, env = "PGSSLKEY", value_name = "FILE")]
    pub db_sslkey: Option<String>,
}

impl StoreArgs {
    /// The database URL with the TLS flags added where it is silent (a URL
    /// that is not PostgreSQL's is left for the store to refuse).
    pub fn database_url(&self) -> anyhow::Result<Option<String>> {
        let t = &self.db_tls;
        let defaults = onceq_pg::TlsParams {
            sslmode: t.db_sslmode.clone(),
            sslrootcert: t.db_sslrootcert.clone(),
            sslcert: t.db_sslcert.clone(),
            sslkey: t.db_sslkey.clone(),
        };
        self.database_url
            .as_deref()
            .map(
                |url| match url.starts_with("postgres://") || url.starts_with("postgresql://") {
                    true => onceq_pg::with_defaults(url, &defaults),
                    false => Ok(url.to_owned()),
                },
            )
            .transpose()
            .map_err(|e| anyhow::anyhow!("--database-url: {e}"))
    }
}

/// How to reach a running server: shared by the client commands.
#[derive(Debug, Clone, Args)]
pub struct ServerArgs {
    /// Base URL of the server.
    #[arg(long, env = "ONCEQ_URL", default_value = "http://127.0.0.1:8787")]
    pub url: String,
    /// API key.
    #[arg(long, env = "ONCEQ_API_KEY", hide_env_values = true)]
    pub api_key: String,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// A client of the server `s` names. The URL is checked here, where the
/// flag that gave it is known: a URL without a scheme would otherwise fail
/// at the first request as "relative URL without a base".
fn client(s: &ServerArgs) -> anyhow::Result<onceq::Client> {
    crate::errors::check_url(&s.url)?;
    Ok(onceq::Client::new(&s.url, &s.api_key)?)
}

/// Runs the parsed command.
pub async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Serve(args) => serve::run(args).await,
        Command::Keys(cmd) => keys::run(cmd).await,
        Command::Projects(cmd) => projects::run(cmd).await,
        Command::Publish(args) => client_cmds::publish(args).await,
        Command::Consume(args) => client_cmds::consume(args).await,
        Command::Ack(args) => lease_cmds::ack(args).await,
        Command::AckBatch(args) => ack_batch::ack_batch(args).await,
        Command::Nack(args) => lease_cmds::nack(args).await,
        Command::Extend(args) => lease_cmds::extend(args).await,
        Command::Stats(args) => client_cmds::stats(args).await,
        Command::Queues(args) => depths::queues(args).await,
        Command::Queue(cmd) => queue::run(cmd).await,
        Command::Message(cmd) => message::run(cmd).await,
        Command::Cancel(args) => message::cancel(args).await,
        Command::Purge(args) => purge::run(args).await,
        Command::Dlq(cmd) => dlq::run(cmd).await,
        Command::Cron(cmd) => cron::run(cmd).await,
        Command::Webhooks(cmd) => webhooks::run(cmd).await,
        Command::Bench(args) => bench::run(args).await,
        Command::Health(args) => health::run(args).await,
    }
}

/// A rate limit on the command line: `--rate R [--burst B]` or `--clear`
/// (whose range is the server's rule, `onceq_server::admin::input`).
#[derive(Debug, Clone, Args)]
pub struct RateArgs {
    /// Requests per second (0: unlimited, overriding the server default).
    #[arg(long, required_unless_present = "clear")]
    pub rate: Option<f64>,
    /// Requests at once after an idle spell (default: one second's worth).
    #[arg(long)]
    pub burst: Option<u32>,
    /// Remove the override: the server's default applies again.
    #[arg(long, conflicts_with_all = ["rate", "burst"])]
    pub clear: bool,
}

/// A rate limit for people.
pub fn describe_rate(per_sec: Option<f64>, burst: Option<u32>) -> String {
    match (per_sec, burst) {
        (None, _) => "server default".into(),
        (Some(0.0), _) => "unlimited".into(),
        (Some(r), b) => format!("{r}/s, burst {}", b.unwrap_or(1)),
    }
}
