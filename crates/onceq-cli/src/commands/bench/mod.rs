//! `onceq bench`: the peers' workload (`../shared/bench-peers`) against a
//! running onceq server, over its HTTP API.
//!
//! Phases, as the peers define them: enqueue with one publish per call;
//! work through that backlog (consume up to 10, no-op handler, the batch
//! acked in the next consume; `--per-message-acks`: one ack call each);
//! enqueue with `publish_batch`; work through that backlog again; then mixed
//! load at fixed offered rates, latency measured from a job's scheduled send
//! time to its handler start. `--json` prints one object whose fields match
//! the peers' result files. Each phase also reports the CPU it cost the
//! server and, when local, PostgreSQL, per job, and their context switches
//! per request (`cpu`).

mod cpu;
mod load;
mod phases;
mod report;

use std::{path::PathBuf, time::Duration};

use clap::Args;
use serde::Serialize;

use load::Load;

/// Flags of `onceq bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Base URL of the server.
    #[arg(long, env = "ONCEQ_URL", default_value = "http://127.0.0.1:8787")]
    url: String,
    /// API key.
    #[arg(long, env = "ONCEQ_API_KEY", hide_env_values = true)]
    api_key: String,
    /// Jobs per enqueue/work phase.
    #[arg(long, default_value_t = 20_000)]
    jobs: usize,
    /// Concurrent producers.
    #[arg(long, default_value_t = 8)]
    producers: usize,
    /// Concurrent workers (consumers).
    #[arg(long, default_value_t = 8)]
    workers: usize,
    /// Offered rates of the mixed phase, jobs/s.
    #[arg(long, value_delimiter = ',', default_value = "200,1000,5000")]
    rates: Vec<u32>,
    /// Seconds each mixed rate is offered.
    #[arg(long, default_value_t = 15)]
    mixed_secs: u64,
    /// Ack each message with its own call (`/v1/queue/ack`), as the seed's
    /// worker does. Without it a worker acks a batch in its next consume
    /// (`acks` on `/v1/queue/consume`): one call per batch.
    #[arg(long)]
    per_message_acks: bool,
    /// Publish with an idempotency key per job (onceq's normal use). With
    /// `--no-keys` the publishes carry none, like the peers' enqueues.
    #[arg(long)]
    no_keys: bool,
    /// A phase gives up after this many seconds.
    #[arg(long, default_value_t = 180)]
    phase_timeout: u64,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Which phases to run: `single` (enqueue one per call, then work),
    /// `batch` (enqueue with publish_batch, then work), `mixed`.
    #[arg(long, value_delimiter = ',', default_value = "single,batch,mixed")]
    phases: Vec<Phase>,
    /// Messages per `publish_batch` call (the contract allows 10; a server
    /// started with a higher `--max-batch` takes more).
    #[arg(long, default_value_t = onceq_types::MAX_BATCH)]
    batch_size: usize,
    /// Messages left waiting, before the phases, in another queue of the
    /// same project (same tables and indexes), published with
    /// `publish_batch` of `--batch-size`: the growth curve's backlog. Every
    /// phase then runs beside it; nothing should slow down.
    #[arg(long, default_value_t = 0)]
    backlog: usize,
    /// Seconds to wait after publishing the backlog, before the phases: a
    /// big fill leaves the database checkpointing its write-ahead log for a
    /// while, and the phases then measure that digestion as well. With a
    /// pause long enough for it, they measure the steady state beside the
    /// backlog.
    #[arg(long, default_value_t = 0)]
    backlog_settle_secs: u64,
    /// The server's process id, for the CPU and context switches per
    /// operation. Without it, the process listening on `--url`'s port when
    /// that is on this machine.
    #[arg(long)]
    server_pid: Option<u32>,
    /// The PostgreSQL postmaster's process id: the cluster's CPU (every
    /// backend) is counted with the server's. Without it (and without
    /// `--postgres-data-dir`), the `postgres` listening on a local port the
    /// server is connected to.
    #[arg(long)]
    postgres_pid: Option<u32>,
    /// The PostgreSQL data directory, whose `postmaster.pid` names the
    /// postmaster (instead of `--postgres-pid`).
    #[arg(long)]
    postgres_data_dir: Option<PathBuf>,
}

/// A part of the workload, for `--phases`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Phase {
    /// Enqueue one job per call, then work through the backlog.
    Single,
    /// Enqueue with `publish_batch`, then work through the backlog.
    Batch,
    /// Mixed load at the offered `--rates`.
    Mixed,
}

/// Shared settings of every phase.
pub struct Plan {
    pub jobs: usize,
    pub producers: usize,
    pub workers: usize,
    pub keys: bool,
    pub per_message_acks: bool,
    pub timeout: Duration,
    pub progress: bool,
}

/// The whole result, shaped like the peers' `raw/*.json`.
#[derive(Debug, Serialize)]
pub struct BenchResult {
    system: &'static str,
    version: &'static str,
    config: String,
    n: usize,
    producers: usize,
    workers: usize,
    date: String,
    runtime: &'static str,
    batch_size: usize,
    /// The processes whose CPU and context switches each phase's `cpu`
    /// counts.
    cpu_watch: cpu::Watched,
    /// Messages waiting in another queue during the phases.
    backlog: usize,
    /// How fast that backlog was published (not part of the comparison).
    #[serde(skip_serializing_if = "Option::is_none")]
    backlog_fill: Option<phases::Throughput>,
    #[serde(skip_serializing_if = "Option::is_none")]
    enqueue_single: Option<phases::Throughput>,
    #[serde(skip_serializing_if = "Option::is_none")]
    work: Option<phases::Throughput>,
    #[serde(skip_serializing_if = "Option::is_none")]
    enqueue_batch: Option<phases::Throughput>,
    #[serde(skip_serializing_if = "Option::is_none")]
    work2: Option<phases::Throughput>,
    mixed: std::collections::BTreeMap<u32, phases::Mixed>,
}

pub async fn run(args: BenchArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.jobs > 0 && args.producers > 0 && args.workers > 0,
        "--jobs, --producers and --workers must be positive"
    );
    anyhow::ensure!(
        args.rates.iter().all(|r| *r > 0),
        "--rates must be positive"
    );
    anyhow::ensure!(args.batch_size > 0, "--batch-size must be positive");
    let load = Load::new(&args.url, &args.api_key)?;
    let plan = Plan {
        jobs: args.jobs,
        producers: args.producers,
        workers: args.workers,
        keys: !args.no_keys,
        per_message_acks: args.per_message_acks,
        timeout: Duration::from_secs(args.phase_timeout),
        progress: !args.json && std::io::IsTerminal::is_terminal(&std::io::stderr()),
    };
    let watch = cpu::Watch::find(
        &args.url,
        args.server_pid,
        args.postgres_pid,
        args.postgres_data_dir.as_deref(),
    )?;
    let run_id = uuid::Uuid::now_v7().simple().to_string();
    let queue = |phase: &str| format!("bench-{phase}-{}", &run_id[20..]);

    let mut backlog_fill = None;
    if args.backlog > 0 {
        let fill = Plan {
            jobs: args.backlog,
            ..plan
        };
        backlog_fill =
            Some(phases::enqueue(&load, &fill, &queue("backlog"), args.batch_size).await?);
        tokio::time::sleep(std::time::Duration::from_secs(args.backlog_settle_secs)).await;
    }
    let (mut enqueue_single, mut work, mut enqueue_batch, mut work2) = (None, None, None, None);
    // Each phase between two samples of the watched processes.
    let measured = |before: cpu::Sample, mut t: phases::Throughput| {
        t.cpu = watch.cost(before, watch.sample(load.requests()), t.jobs);
        t
    };
    let start = || watch.sample(load.requests());
    if args.phases.contains(&Phase::Single) {
        let s = start();
        enqueue_single = Some(measured(
            s,
            phases::enqueue(&load, &plan, &queue("a"), 1).await?,
        ));
        let s = start();
        work = Some(measured(s, phases::work(&load, &plan, &queue("a")).await?));
    }
    if args.phases.contains(&Phase::Batch) {
        let size = args.batch_size;
        let s = start();
        let t = phases::enqueue(&load, &plan, &queue("b"), size).await?;
        enqueue_batch = Some(measured(s, t));
        let s = start();
        work2 = Some(measured(s, phases::work(&load, &plan, &queue("b")).await?));
    }
    let mut mixed = std::collections::BTreeMap::new();
    let rates = if args.phases.contains(&Phase::Mixed) {
        args.rates.as_slice()
    } else {
        &[]
    };
    for rate in rates {
        let name = queue(&format!("m{rate}"));
        let before = start();
        let mut result = phases::mixed(
            &load,
            &plan,
            &name,
            *rate,
            Duration::from_secs(args.mixed_secs),
        )
        .await?;
        result.cpu = watch.cost(before, start(), result.sent);
        mixed.insert(*rate, result);
    }
    for q in ["a", "b", "backlog"]
        .map(queue)
        .into_iter()
        .chain(args.rates.iter().map(|r| queue(&format!("m{r}"))))
    {
        load.delete_queue(&q).await;
        load.delete_queue(&format!("{q}-dlq")).await;
    }

    let result = BenchResult {
        system: "onceq",
        version: env!("CARGO_PKG_VERSION"),
        config: format!(
            "HTTP API at {}; publish {}; consume max_messages=10 wait_seconds=1, {}; {} producers, {} workers",
            args.url,
            if plan.keys {
                "with an idempotency key per job"
            } else {
                "without idempotency keys"
            },
            if plan.per_message_acks {
                "ack per message"
            } else {
                "each batch acked in the next consume"
            },
            plan.producers,
            plan.workers
        ),
        n: plan.jobs,
        producers: plan.producers,
        workers: plan.workers,
        date: jiff::Timestamp::now().to_string(),
        runtime: "rust release build, tokio multi-thread (client)",
        batch_size: args.batch_size,
        cpu_watch: watch.watched(),
        backlog: args.backlog,
        backlog_fill,
        enqueue_single,
        work,
        enqueue_batch,
        work2,
        mixed,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        report::table(&result);
    }
    Ok(())
}
