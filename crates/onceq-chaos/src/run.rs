//! [`run()`]: one chaos run, start to report.
//!
//! 1. PostgreSQL, the servers, the workers, the APIs, the proxies
//!    ([`Pipeline::start`]).
//! 2. The load ([`client::run`]) with the faults ([`faults::run`]) and the
//!    redelivery sampler running beside it.
//! 3. Faults stop (PostgreSQL is up, killed processes come back), then the
//!    drain ([`drain::run`]).
//! 4. The check ([`check::run`]), the cron scenario's count
//!    ([`cron::check`]) and the worker logs ([`logs::read`]): the
//!    [`Report`].
//!
//! With `--hostile`, the hostile tenant ([`hostile`]) arrives during step
//! 2 and stays through the drain and the checks.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use tokio_util::sync::CancellationToken;

use crate::cluster::Cluster;
use crate::config::Config;
use crate::faults::{self, Counts, Kind};
use crate::latency::Phase;
use crate::pipeline::{Binaries, Pipeline};
use crate::report::{Report, VictimLatency};
use crate::sampler::{self, Seen};
use crate::{check, client, cron, drain, hostile, logs};

/// Runs the pipeline under faults and checks it. An `Err` means the run
/// could not be carried out (a binary missing, PostgreSQL not starting);
/// lost or duplicated work is in the [`Report`], see [`Report::passed`].
pub async fn run(config: Config) -> anyhow::Result<Report> {
    let bins = Binaries::locate(&config)?;
    let seed = config.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    });
    let run_id = format!("{:08x}", seed as u32);
    let run_dir = match &config.run_dir {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!("onceq-chaos-{run_id}-{}", std::process::id())),
    };
    std::fs::create_dir_all(&run_dir)?;

    // The standby is there for failovers only: without them a run keeps
    // the single PostgreSQL it always had.
    let ha = config.schedule.failover.is_some();
    let cluster = Arc::new(match config.patroni {
        true => Cluster::start_patroni().await,
        false => Cluster::start(ha).await,
    });
    let stop = CancellationToken::new();
    // Whatever happens below, the children die with the run.
    let _stop_guard = stop.clone().drop_guard();
    let pipeline = Arc::new(Pipeline::start(&config, &cluster, &bins, &run_dir, &stop).await?);

    // The cron scenario fires through everything that follows.
    let cron_setup = cron::start(pipeline.server_ports[0]).await?;

    let seen = Arc::new(Seen::default());
    let sampling = stop.child_token();
    let sampler = tokio::spawn(sampler::run(
        cluster.queue_url.clone(),
        seen.clone(),
        sampling.clone(),
    ));

    let counts = Arc::new(Counts::default());
    let faulting = stop.child_token();
    let fault_task = {
        let config = config.clone();
        let (cluster, pipeline, counts, faulting) = (
            cluster.clone(),
            pipeline.clone(),
            counts.clone(),
            faulting.clone(),
        );
        tokio::spawn(async move {
            faults::run(&config, cluster, pipeline, counts, seed, faulting).await;
        })
    };

    let bar = progress_bar(&config);
    let ticker = {
        let (bar, counts, done) = (bar.clone(), counts.clone(), stop.child_token());
        let ticking = done.clone();
        let task = tokio::spawn(async move {
            while !ticking.is_cancelled() {
                bar.set_message(format!("faults {}", counts.total()));
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        });
        (task, done)
    };

    let hostile = match &config.hostile {
        Some(sizes) => {
            let paced = match config.rate > 0.0 {
                true => config.requests as f64 / config.rate,
                false => 0.0,
            };
            Some(
                hostile::spawn(
                    sizes.clone(),
                    bins.onceq.clone(),
                    cluster.queue_url.clone(),
                    pipeline.server_ports.clone(),
                    Duration::from_secs_f64(paced * sizes.arrive_at.clamp(0.0, 1.0)),
                    stop.child_token(),
                )
                .await?,
            )
        }
        None => None,
    };

    let load = client::run(
        &config,
        &run_id,
        pipeline.api_ports.clone(),
        seed,
        bar.clone(),
    )
    .await?;
    faulting.cancel();
    fault_task.await?;
    ticker.1.cancel();
    let _ = ticker.0.await;
    bar.finish_and_clear();
    // Killed processes come back after the pause.
    tokio::time::sleep(faults::settle_time(&config)).await;

    let drained = drain::run(
        &cluster.queue_url,
        &cluster.app_url,
        pipeline.server_ports[0],
        config.drain_deadline,
    )
    .await?;
    sampling.cancel();
    let _ = sampler.await;
    let findings = check::run(&load.keys, &cluster.queue_url, &cluster.app_url).await?;
    let cron = cron::check(&cron_setup, &cluster.queue_url).await?;
    let hostile = match hostile {
        Some(h) => Some(h.finish(load.started, &cluster.queue_url).await?),
        None => None,
    };
    stop.cancel();
    let worker_log = logs::read(&run_dir);

    let s = &load.stats;
    let report = Report {
        setup: setup_line(&config, seed),
        requests: config.requests,
        load_elapsed: load.elapsed,
        sends: s.sends.load(Relaxed),
        double_taps: s.double_taps.load(Relaxed),
        impatient: s.impatient.load(Relaxed),
        replays_asked: s.replays_asked.load(Relaxed),
        timeouts: s.timeouts.load(Relaxed),
        conn_errors: s.conn_errors.load(Relaxed),
        server_errors: s.server_errors.load(Relaxed),
        in_flight: s.in_flight.load(Relaxed),
        accepted: s.accepted.load(Relaxed),
        replays_answered: s.replayed.load(Relaxed),
        faults: Kind::ALL.iter().map(|k| (*k, counts.get(*k))).collect(),
        connections_cut: counts.connections_cut.load(Relaxed),
        failover_longest: *counts.failover_longest.lock().expect("failover lock"),
        restarts: pipeline.all().map(|p| p.starts().saturating_sub(1)).sum(),
        slow_workers: format!(
            "{} of {} workers work {} ms under a {} s lease, heartbeat every {} ms",
            config.slow_workers,
            config.workers,
            config.slow_work_ms,
            config.slow_visibility_secs,
            config.slow_heartbeat_ms
        ),
        redeliveries: seen.redeliveries(),
        redelivered_messages: seen.messages(),
        worker_log,
        drained,
        findings,
        cron,
        latency: latency_of(&load, hostile.as_ref()),
        hostile,
        run_dir: PathBuf::from(&run_dir),
    };
    // Beside the logs, for a run that failed in a test.
    std::fs::write(run_dir.join("report.txt"), format!("{report}\n"))?;
    Ok(report)
}

/// The victim's latency: over the whole load, or before and with the
/// hostile tenant (split at its arrival).
fn latency_of(load: &client::Load, hostile: Option<&hostile::Findings>) -> VictimLatency {
    let sends = load.stats.send_latency.lock().expect("latency lock");
    let keys = load.stats.key_latency.lock().expect("latency lock");
    match hostile {
        None => VictimLatency {
            with: Phase::of(&sends, &keys, 0, u64::MAX),
            ..VictimLatency::default()
        },
        Some(h) => {
            let arrived = u64::try_from(h.arrived.as_millis()).unwrap_or(u64::MAX);
            VictimLatency {
                before: Some(Phase::of(&sends, &keys, 0, arrived)),
                with: Phase::of(&sends, &keys, arrived, u64::MAX),
                bound: h.sizes.as_ref().map(|s| s.bound),
            }
        }
    }
}

fn setup_line(c: &Config, seed: u64) -> String {
    format!(
        "app: {:?}; {} server(s), {} api(s), {} worker(s); postgres: {}; {} requests at {}/s, {} in flight; break: {}; seed {seed}",
        c.app,
        c.servers,
        c.apis,
        c.workers,
        if c.patroni {
            "Patroni, 3 nodes (strict synchronous mode) on 3 etcd members"
        } else if c.schedule.failover.is_some() {
            "primary + synchronous standby"
        } else {
            "one node"
        },
        c.requests,
        c.rate,
        c.concurrency,
        c.broken
            .map_or("none".to_owned(), |b| format!("{b:?}").to_lowercase()),
    ) + &match &c.hostile {
        Some(h) => format!(
            "; hostile tenant: {} queues, {} long polls, {} schedules",
            h.queues, h.long_polls, h.schedules
        ),
        None => String::new(),
    } + &match c.server_args.is_empty() {
        true => String::new(),
        false => format!("; server args: {}", c.server_args.join(" ")),
    }
}

fn progress_bar(config: &Config) -> ProgressBar {
    if !config.progress || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(config.requests);
    if let Ok(style) = ProgressStyle::with_template(
        "{elapsed_precise} [{bar:40}] {pos}/{len} requests answered, {msg} ({eta} left)",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}
