//! `exports worker`: builds each export once, whatever the queue redelivers.
//!
//! The handler writes its one `exports` row through the transaction the
//! runtime gives it; the runtime marks the job fact `done` in the same
//! transaction, so the row and the fact commit together or not at all.

use std::time::Duration;

use clap::Args;
use onceq::worker::{Handler, Job, Worker, WorkerConfig};
use tokio_util::sync::CancellationToken;

/// Flags of `exports worker`.
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// Jobs at once.
    #[arg(long, env = "WORKER_CONCURRENCY", default_value_t = 8)]
    concurrency: usize,
    /// Message lease, seconds.
    #[arg(long, env = "WORKER_VISIBILITY_SECS", default_value_t = 30)]
    visibility_secs: u32,
    /// Job-fact lease, seconds.
    #[arg(long, env = "WORKER_FACT_LEASE_SECS", default_value_t = 60)]
    fact_lease_secs: u64,
    /// Heartbeat period, milliseconds (default: a third of the lease).
    #[arg(long, env = "WORKER_HEARTBEAT_MS")]
    heartbeat_ms: Option<u64>,
    /// Pretend building an export takes this long (the chaos run uses it
    /// to make leases shorter than the work).
    #[arg(long, env = "EXPORTS_WORK_MS", default_value_t = 0)]
    work_ms: u64,
    /// For the chaos run's teeth only: the seed's worker pattern without
    /// job facts (do the work, then ack), which duplicates on redelivery.
    // On/off as onceq's own settings spell it (`1`, `true`, `yes`, `on`,
    // any case; the flag alone means on): clap's boolish parser.
    #[arg(
        long,
        env = "EXPORTS_UNSAFE_NAIVE_WORKER",
        hide = true,
        value_parser = clap::builder::BoolishValueParser::new(),
        action = clap::ArgAction::Set,
        num_args = 0..=1,
        default_missing_value = "true",
        default_value = "false"
    )]
    unsafe_naive: bool,
}

/// Builds one export: one row in `exports`.
struct BuildExport {
    work: Duration,
}

#[async_trait::async_trait]
impl Handler for BuildExport {
    async fn handle(
        &self,
        job: &Job,
        tx: &tokio_postgres::Transaction<'_>,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        if !self.work.is_zero() {
            tokio::time::sleep(self.work).await;
        }
        let field = |name: &str| {
            job.payload
                .get(name)
                .and_then(|v| v.as_str())
                .map(str::to_owned)
        };
        tx.execute(
            "INSERT INTO exports (job_fact, tenant, format) VALUES ($1, $2, $3)",
            &[&job.fact, &field("tenant"), &field("format")],
        )
        .await?;
        Ok(())
    }
}

pub async fn run(
    args: WorkerArgs,
    pool: deadpool_postgres::Pool,
    client: onceq::Client,
    queue: String,
) -> anyhow::Result<()> {
    crate::db::ensure_exports_table(&pool).await?;
    let work = Duration::from_millis(args.work_ms);
    let shutdown = CancellationToken::new();
    let stop = shutdown.clone();
    tokio::spawn(async move {
        crate::shutdown_signal().await;
        tracing::info!("stopping: finishing what is held");
        stop.cancel();
    });
    if args.unsafe_naive {
        tracing::warn!("running the naive worker WITHOUT job facts (chaos teeth mode)");
        return crate::naive::run(client, pool, queue, args.visibility_secs, work, shutdown).await;
    }
    let mut config = WorkerConfig::new(queue);
    config.concurrency = args.concurrency;
    config.visibility_timeout = args.visibility_secs;
    config.fact_lease = Duration::from_secs(args.fact_lease_secs);
    config.heartbeat = args
        .heartbeat_ms
        .map(Duration::from_millis)
        .unwrap_or_else(|| Duration::from_secs(u64::from(args.visibility_secs)) / 3);
    let worker = Worker::new(client, pool, config, BuildExport { work }).await?;
    tracing::info!("exports worker running");
    worker.run(shutdown).await?;
    let m = worker.metrics();
    tracing::info!(?m, "exports worker stopped");
    Ok(())
}
