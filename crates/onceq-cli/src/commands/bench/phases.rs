//! The four kinds of phase, as `../shared/bench-peers/README.md` defines
//! them.

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use serde::Serialize;
use serde_json::json;

use super::{Plan, cpu::PhaseCpu, load::Load};

/// An enqueue or work phase.
#[derive(Debug, Serialize)]
pub struct Throughput {
    pub jobs: usize,
    pub secs: f64,
    pub jobs_per_s: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_rate: Option<u64>,
    pub timed_out: bool,
    /// What the phase cost the server (and PostgreSQL), when watched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<PhaseCpu>,
}

/// One offered rate of the mixed phase.
#[derive(Debug, Serialize)]
pub struct Mixed {
    pub offered_rate: u32,
    pub secs: u64,
    pub sent: usize,
    pub achieved_send_rate: u64,
    pub started: usize,
    pub errors: usize,
    pub missing: usize,
    pub p50_ms: Option<f64>,
    pub p90_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub max_ms: Option<f64>,
    /// What the phase cost per job over its whole life (publish, consume,
    /// ack), when watched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<PhaseCpu>,
}

fn bar(plan: &Plan, len: u64, what: &str) -> indicatif::ProgressBar {
    if !plan.progress {
        return indicatif::ProgressBar::hidden();
    }
    let pb = indicatif::ProgressBar::new(len);
    pb.set_style(
        indicatif::ProgressStyle::with_template("{msg:>22} [{bar:30}] {pos}/{len} {per_sec}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb.set_message(what.to_owned());
    pb
}

/// Producers enqueue `plan.jobs` jobs, `batch` per call.
pub async fn enqueue(
    load: &Load,
    plan: &Plan,
    queue: &str,
    batch: usize,
) -> anyhow::Result<Throughput> {
    let what = if batch == 1 {
        "enqueue single"
    } else {
        "enqueue batch"
    };
    let pb = bar(plan, plan.jobs as u64, what);
    let next = Arc::new(AtomicUsize::new(0));
    let timed_out = Arc::new(AtomicBool::new(false));
    let deadline = Instant::now() + plan.timeout;
    let t0 = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..plan.producers {
        let (load, next, timed_out, pb) =
            (load.clone(), next.clone(), timed_out.clone(), pb.clone());
        let (queue, n, keys) = (queue.to_owned(), plan.jobs, plan.keys);
        tasks.push(tokio::spawn(async move {
            loop {
                if Instant::now() > deadline {
                    timed_out.store(true, Ordering::Relaxed);
                    return anyhow::Ok(());
                }
                let start = next.fetch_add(batch, Ordering::Relaxed);
                if start >= n {
                    return Ok(());
                }
                let items: Vec<_> = (start..n.min(start + batch))
                    .map(|i| {
                        (
                            json!({"i": i, "k": "tiny"}),
                            keys.then(|| format!("{queue}-{i}")),
                        )
                    })
                    .collect();
                let count = items.len() as u64;
                if batch == 1 {
                    let (payload, key) = items.into_iter().next().expect("one item");
                    load.publish(&queue, payload, key).await?;
                } else {
                    load.publish_batch(&queue, items).await?;
                }
                pb.inc(count);
            }
        }));
    }
    for t in tasks {
        t.await??;
    }
    pb.finish_and_clear();
    let secs = t0.elapsed().as_secs_f64();
    Ok(Throughput {
        jobs: plan.jobs,
        secs: round2(secs),
        jobs_per_s: (plan.jobs as f64 / secs) as u64,
        start_rate: None,
        timed_out: timed_out.load(Ordering::Relaxed),
        cpu: None,
    })
}

/// Workers drain the backlog of `queue`: consume up to 10, then ack the
/// batch in the next consume (or, with `plan.per_message_acks`, ack each
/// as the seed's worker does).
///
/// The phase ends, as the peers' harness ends it (`workPhase` in
/// `../shared/bench-peers/node/common.mjs`), when the store holds none of
/// the jobs any more: once every job has been handed out, its stats are
/// read every 10 ms. A worker's answers cannot tell: the consume that
/// carries a worker's last acks commits them first, then long-polls its
/// `wait_seconds` for messages that will not come, so timing the phase by
/// the answers added that wait (up to a second) to its length.
pub async fn work(load: &Load, plan: &Plan, queue: &str) -> anyhow::Result<Throughput> {
    let pb = bar(plan, plan.jobs as u64, "work");
    let acked = Arc::new(AtomicUsize::new(0));
    let started = Arc::new(AtomicUsize::new(0));
    let first = Arc::new(Mutex::new(None::<Instant>));
    let stop = Arc::new(AtomicBool::new(false));
    let deadline = Instant::now() + plan.timeout;
    let mut tasks = Vec::new();
    for _ in 0..plan.workers {
        let (load, acked, started, first, stop, pb) = (
            load.clone(),
            acked.clone(),
            started.clone(),
            first.clone(),
            stop.clone(),
            pb.clone(),
        );
        let queue = queue.to_owned();
        let per_message = plan.per_message_acks;
        tasks.push(tokio::spawn(async move {
            let count = |n: usize| {
                acked.fetch_add(n, Ordering::Relaxed);
                pb.inc(n as u64);
            };
            // The batch whose acks the next consume carries.
            let mut done = Vec::new();
            while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                let (batch, n_acked) = load.consume_acking(&queue, 1, &done).await?;
                count(n_acked);
                done.clear();
                for m in batch {
                    // the no-op handler starts here
                    first.lock().expect("lock").get_or_insert_with(Instant::now);
                    started.fetch_add(1, Ordering::Relaxed);
                    match per_message {
                        true => count(usize::from(load.ack(&queue, &m).await?)),
                        false => done.push(m),
                    }
                }
            }
            anyhow::Ok(())
        }));
    }
    let drained = drained(load, queue, &started, plan.jobs, deadline).await;
    let done_at = Instant::now();
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await??;
    }
    let drained = drained?;
    pb.finish_and_clear();
    let started = started.load(Ordering::Relaxed);
    let first = first.lock().expect("lock").unwrap_or(done_at);
    let secs = (done_at - first).as_secs_f64().max(1e-6);
    // Every worker has seen the answers to its acks by now.
    let jobs = acked.load(Ordering::Relaxed);
    let all_started = drained.unwrap_or(done_at);
    let start_secs = (all_started - first).as_secs_f64().max(1e-6);
    Ok(Throughput {
        jobs,
        secs: round2(secs),
        jobs_per_s: (jobs as f64 / secs) as u64,
        start_rate: Some((started as f64 / start_secs) as u64),
        timed_out: drained.is_none(),
        cpu: None,
    })
}

/// Waits until all `jobs` have been handed out (checked every 2 ms, as the
/// peers' harness does), then until the store holds none of them (every
/// 10 ms): when every job was handed out, or `None` past `deadline`.
async fn drained(
    load: &Load,
    queue: &str,
    started: &AtomicUsize,
    jobs: usize,
    deadline: Instant,
) -> anyhow::Result<Option<Instant>> {
    while started.load(Ordering::Relaxed) < jobs {
        if Instant::now() >= deadline {
            return Ok(None);
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let all_started = Instant::now();
    while load.remaining(queue).await? > 0 {
        if Instant::now() >= deadline {
            return Ok(None);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok(Some(all_started))
}

/// Open-loop producer at `rate` jobs/s for `secs`, workers running;
/// latency = handler start − scheduled send time.
pub async fn mixed(
    load: &Load,
    plan: &Plan,
    queue: &str,
    rate: u32,
    secs: Duration,
) -> anyhow::Result<Mixed> {
    const IN_FLIGHT: usize = 64;
    load.create_queue(queue).await?;
    let epoch = Instant::now();
    let total = (u64::from(rate) * secs.as_secs()) as usize;
    let pb = bar(plan, total as u64, &format!("mixed @{rate}/s"));
    let latencies = Arc::new(Mutex::new(Vec::with_capacity(total)));
    let stop = Arc::new(AtomicBool::new(false));
    let errors = Arc::new(AtomicUsize::new(0));

    let mut workers = Vec::new();
    for _ in 0..plan.workers {
        let (load, latencies, stop, errors, pb) = (
            load.clone(),
            latencies.clone(),
            stop.clone(),
            errors.clone(),
            pb.clone(),
        );
        let queue = queue.to_owned();
        let per_message = plan.per_message_acks;
        workers.push(tokio::spawn(async move {
            let mut done = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let Ok((batch, _)) = load.consume_acking(&queue, 1, &done).await else {
                    errors.fetch_add(1, Ordering::Relaxed);
                    done.clear();
                    continue;
                };
                done.clear();
                for m in batch {
                    let started_ms = epoch.elapsed().as_secs_f64() * 1000.0;
                    if let Some(t) = m.payload["t"].as_f64() {
                        latencies.lock().expect("lock").push(started_ms - t);
                        pb.inc(1);
                    }
                    if !per_message {
                        done.push(m);
                    } else if load.ack(&queue, &m).await.is_err() {
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }));
    }

    let permits = Arc::new(tokio::sync::Semaphore::new(IN_FLIGHT));
    let send_deadline = epoch + secs * 3;
    let mut sent = 0;
    let mut sends = tokio::task::JoinSet::new();
    for k in 0..total {
        let scheduled = Duration::from_secs_f64(k as f64 / f64::from(rate));
        tokio::time::sleep_until((epoch + scheduled).into()).await;
        if Instant::now() > send_deadline {
            break;
        }
        let permit = permits.clone().acquire_owned().await?;
        let (load, queue, errors) = (load.clone(), queue.to_owned(), errors.clone());
        let key = plan.keys.then(|| format!("{queue}-{k}"));
        let t_ms = scheduled.as_secs_f64() * 1000.0;
        sends.spawn(async move {
            if load
                .publish(&queue, json!({"t": t_ms, "i": k}), key)
                .await
                .is_err()
            {
                errors.fetch_add(1, Ordering::Relaxed);
            }
            drop(permit);
        });
        sent += 1;
    }
    while sends.join_next().await.is_some() {}
    let send_secs = epoch.elapsed().as_secs_f64();
    let wait_until = Instant::now() + Duration::from_secs(30);
    while latencies.lock().expect("lock").len() < sent && Instant::now() < wait_until {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        let _ = w.await;
    }
    pb.finish_and_clear();

    let mut lat = std::mem::take(&mut *latencies.lock().expect("lock"));
    lat.sort_by(f64::total_cmp);
    let pct = |p: f64| -> Option<f64> {
        (!lat.is_empty()).then(|| {
            round1(lat[((p / 100.0) * lat.len() as f64) as usize % lat.len().max(1)].max(0.0))
        })
    };
    Ok(Mixed {
        offered_rate: rate,
        secs: secs.as_secs(),
        sent,
        achieved_send_rate: (sent as f64
            / send_secs
                .min(secs.as_secs_f64() * 3.0)
                .max(secs.as_secs_f64())) as u64,
        started: lat.len(),
        errors: errors.load(Ordering::Relaxed),
        missing: sent.saturating_sub(lat.len()),
        p50_ms: pct(50.0),
        p90_ms: pct(90.0),
        p99_ms: pct(99.0),
        max_ms: lat.last().map(|m| round1(*m)),
        cpu: None,
    })
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}
