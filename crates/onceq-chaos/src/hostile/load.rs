//! The hostile tenant's ongoing load, from the end of its setup until the
//! run stops: parked long polls (`consume` with `wait_seconds: 20` on
//! queues nothing publishes into, each polling again as soon as it is
//! answered, backing off only on a 429's `Retry-After`), and no-op keyed
//! calls — `cron/pause` of a paused schedule and `queue/pause` of a paused
//! queue, each with a fresh `Idempotency-Key` — at a steady rate.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use rand::{Rng, SeedableRng, rngs::StdRng};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::api::Api;

/// No-op calls in flight at once.
const NOOP_CONCURRENCY: usize = 16;

/// What the load saw.
#[derive(Debug, Default)]
pub struct Counters {
    /// Long polls open now (sent, not yet answered).
    pub polls_open: AtomicU64,
    /// The most open at once.
    pub polls_peak: AtomicU64,
    /// Long polls answered 200 (their wait ran out, or cut short).
    pub polls_answered: AtomicU64,
    /// Long polls refused 429 (the per-key or per-project cap).
    pub polls_capped: AtomicU64,
    /// Long polls that failed otherwise (server killed, 5xx, timeout).
    pub polls_failed: AtomicU64,
    /// No-op calls sent.
    pub noops: AtomicU64,
    /// Answered 2xx.
    pub noops_ok: AtomicU64,
    /// Answered 429 (the project's call ledger full, or a rate limit).
    pub noops_refused: AtomicU64,
    /// Anything else (connection errors, 5xx while servers die).
    pub noops_failed: AtomicU64,
    /// When the long polls started, ms after the tenant arrived.
    pub polls_from_ms: AtomicU64,
    /// When the no-op calls started, likewise.
    pub noops_from_ms: AtomicU64,
}

/// Starts `long_polls` pollers on `queues`; they run until `stop`.
pub fn polls(
    api: &Arc<Api>,
    queues: &[String],
    long_polls: usize,
    counters: &Arc<Counters>,
    stop: &CancellationToken,
) {
    for i in 0..long_polls {
        let queue = queues[i % queues.len()].clone();
        let (api, counters, stop) = (api.clone(), counters.clone(), stop.clone());
        tokio::spawn(async move {
            tokio::select! {
                () = poll_forever(&api, &queue, &counters, i as u64) => {}
                () = stop.cancelled() => {}
            }
        });
    }
}

/// No-op calls at `rate` per second until `stop`: `cron/pause` of the
/// paused schedule `job`, `queue/pause` of the paused queue.
pub async fn noops(
    api: &Arc<Api>,
    job: &str,
    rate: f64,
    counters: &Arc<Counters>,
    stop: &CancellationToken,
) {
    if rate <= 0.0 {
        return;
    }
    let paths = [
        format!("/v1/cron/pause/{job}"),
        format!("/v1/queue/pause/{}", super::setup::PAUSED_QUEUE),
    ];
    tokio::select! {
        () = noops_forever(api, &paths, rate, counters) => {}
        () = stop.cancelled() => {}
    }
}

async fn poll_forever(api: &Api, queue: &str, c: &Counters, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let body = json!({"queue": queue, "wait_seconds": 20, "max_messages": 10});
    // Consecutive failures: the pause after one doubles (a server down
    // for a restart is not hammered by every poller at once).
    let mut failures = 0u32;
    loop {
        let open = c.polls_open.fetch_add(1, Relaxed) + 1;
        c.polls_peak.fetch_max(open, Relaxed);
        let answer = api
            .call(
                reqwest::Method::POST,
                "/v1/queue/consume",
                Some(&body),
                None,
                Duration::from_secs(30),
            )
            .await;
        c.polls_open.fetch_sub(1, Relaxed);
        let pause = match answer {
            Ok(a) if a.status == 200 => {
                c.polls_answered.fetch_add(1, Relaxed);
                failures = 0;
                Duration::ZERO
            }
            Ok(a) if a.status == 429 => {
                c.polls_capped.fetch_add(1, Relaxed);
                Duration::from_secs(a.retry_after.unwrap_or(1).clamp(1, 5))
            }
            _ => {
                c.polls_failed.fetch_add(1, Relaxed);
                failures += 1;
                let cap = 100u64 << failures.min(5);
                Duration::from_millis(rng.random_range(cap / 2..=cap))
            }
        };
        tokio::time::sleep(pause).await;
    }
}

async fn noops_forever(api: &Arc<Api>, paths: &[String; 2], rate: f64, c: &Arc<Counters>) {
    let mut pace = tokio::time::interval(Duration::from_secs_f64(1.0 / rate));
    pace.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let permits = Arc::new(tokio::sync::Semaphore::new(NOOP_CONCURRENCY));
    for n in 0u64.. {
        pace.tick().await;
        let Ok(permit) = permits.clone().acquire_owned().await else {
            return;
        };
        let (api, c) = (api.clone(), c.clone());
        let path = paths[(n % 2) as usize].clone();
        tokio::spawn(async move {
            c.noops.fetch_add(1, Relaxed);
            let key = format!("hostile-noop-{n}");
            let answer = api
                .call(
                    reqwest::Method::POST,
                    &path,
                    None,
                    Some(&key),
                    Duration::from_secs(10),
                )
                .await;
            match answer {
                Ok(a) if (200..300).contains(&a.status) => c.noops_ok.fetch_add(1, Relaxed),
                Ok(a) if a.status == 429 => c.noops_refused.fetch_add(1, Relaxed),
                _ => c.noops_failed.fetch_add(1, Relaxed),
            };
            drop(permit);
        });
    }
}
