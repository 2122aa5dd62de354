//! The load: R distinct export requests, each with its own
//! `Idempotency-Key` and body, sent until each has a 202 — the way a real
//! client does it: some are double-tapped (two sends at once), some give up
//! on their first sends after a few milliseconds and retry, every 5xx and
//! connection error is retried with backoff, a 409 waits for its
//! `Retry-After`, and some are sent once more after their 202 (expecting a
//! replay). Every 202's `message_id` is kept, per key.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use indicatif::ProgressBar;
use rand::{Rng, SeedableRng, rngs::StdRng};
use tokio::time::Instant;

use crate::config::Config;
use crate::latency::Sample;

/// One key's story.
#[derive(Debug, Clone)]
pub struct KeyRecord {
    /// The `Idempotency-Key`.
    pub key: String,
    /// The body's tenant (unique per key, so that a row written under a
    /// foreign job fact can still be traced to its request).
    pub tenant: String,
    /// The `message_id` of every 202 it got, in order.
    pub message_ids: Vec<String>,
    /// Answers other than 202/409/5xx (e.g. 422): never expected.
    pub odd_answers: Vec<String>,
}

/// Counters over the whole load.
#[derive(Debug, Default)]
pub struct ClientStats {
    /// HTTP sends, all of them.
    pub sends: AtomicU64,
    /// Keys sent twice at once.
    pub double_taps: AtomicU64,
    /// Keys whose first sends had a short timeout.
    pub impatient: AtomicU64,
    /// Keys sent again after their 202.
    pub replays_asked: AtomicU64,
    /// Sends that timed out on the client.
    pub timeouts: AtomicU64,
    /// Sends that found no API (refused, reset).
    pub conn_errors: AtomicU64,
    /// 5xx answers.
    pub server_errors: AtomicU64,
    /// 409 (in flight) answers.
    pub in_flight: AtomicU64,
    /// 202 answers.
    pub accepted: AtomicU64,
    /// 202 answers with `Idempotent-Replayed: true`.
    pub replayed: AtomicU64,
    /// Each 202's send: when it started and how long it took.
    pub send_latency: Mutex<Vec<Sample>>,
    /// Each key's first send to its first 202.
    pub key_latency: Mutex<Vec<Sample>>,
}

/// What the load did.
#[derive(Debug)]
pub struct Load {
    /// Per key, in key order.
    pub keys: Vec<KeyRecord>,
    /// The counters.
    pub stats: Arc<ClientStats>,
    /// How long it took.
    pub elapsed: Duration,
    /// When it began (the latency samples count from here).
    pub started: Instant,
}

struct Ctx {
    http: reqwest::Client,
    api_ports: Vec<u16>,
    stats: Arc<ClientStats>,
    timeout: Duration,
    short_timeout_ms: (u64, u64),
    started: Instant,
    /// How long the run may go without any 202 before the client gives up.
    stall: Duration,
    /// When the last 202 came, in ms since `started`.
    last_202_ms: AtomicU64,
}

impl Ctx {
    /// The client gives up once no key has had a 202 for `stall`: the
    /// pipeline stopped answering. A slow machine makes a run long, never
    /// this long without an answer, so it is not a limit on the run's
    /// length (which would fail a loaded machine for being slow: under
    /// faults that come by the clock, a longer load meets more of them).
    fn stalled(&self) -> bool {
        let last = self.started + Duration::from_millis(self.last_202_ms.load(Relaxed));
        Instant::now() >= last + self.stall
    }

    fn answered(&self) {
        self.last_202_ms
            .fetch_max(self.ms_since_start(Instant::now()), Relaxed);
    }

    fn ms_since_start(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.started).as_millis()).unwrap_or(u64::MAX)
    }

    /// A 202 to a send begun at `sent`, of a key first sent at `first`;
    /// `first_202`: the key had none before.
    fn record_latency(&self, sent: Instant, first: Instant, first_202: bool) {
        let now = Instant::now();
        let sample = |from: Instant| Sample {
            at_ms: self.ms_since_start(from),
            ms: u64::try_from(now.duration_since(from).as_millis()).unwrap_or(u64::MAX),
        };
        self.stats
            .send_latency
            .lock()
            .expect("latency lock")
            .push(sample(sent));
        if first_202 {
            self.stats
                .key_latency
                .lock()
                .expect("latency lock")
                .push(sample(first));
        }
    }
}

/// The key of request `i` in run `run_id`.
pub fn key_of(run_id: &str, i: u64) -> String {
    format!("chaos-{run_id}-{i:06}")
}

/// Sends every request and returns when each has a 202 or no key has had
/// one for the load deadline ([`Config::load_deadline`]).
pub async fn run(
    config: &Config,
    run_id: &str,
    api_ports: Vec<u16>,
    seed: u64,
    bar: ProgressBar,
) -> anyhow::Result<Load> {
    let started = Instant::now();
    let stats = Arc::new(ClientStats::default());
    let ctx = Arc::new(Ctx {
        http: reqwest::Client::builder()
            .no_proxy()
            .pool_idle_timeout(Duration::from_secs(5))
            .build()?,
        api_ports,
        stats: stats.clone(),
        timeout: config.timeout,
        short_timeout_ms: config.short_timeout_ms,
        started,
        stall: config.load_deadline,
        last_202_ms: AtomicU64::new(0),
    });
    let permits = Arc::new(tokio::sync::Semaphore::new(config.concurrency.max(1)));
    let mut pace = (config.rate > 0.0).then(|| {
        let mut t = tokio::time::interval(Duration::from_secs_f64(1.0 / config.rate));
        t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        t
    });
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..config.requests {
        if let Some(t) = pace.as_mut() {
            t.tick().await;
        }
        let permit = permits.clone().acquire_owned().await?;
        let mut rng = StdRng::seed_from_u64(seed ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let plan = Plan {
            double_tap: rng.random_bool(config.double_tap.clamp(0.0, 1.0)),
            impatient: rng.random_bool(config.impatient.clamp(0.0, 1.0)),
            replay: rng.random_bool(config.replay.clamp(0.0, 1.0)),
        };
        let record = KeyRecord {
            key: key_of(run_id, i),
            tenant: format!("tenant-{run_id}-{i}"),
            message_ids: Vec::new(),
            odd_answers: Vec::new(),
        };
        let format = ["csv", "pdf", "xlsx"][(i % 3) as usize];
        let ctx = ctx.clone();
        let bar = bar.clone();
        tasks.spawn(async move {
            let record = one_key(&ctx, record, format, plan, rng).await;
            bar.inc(1);
            drop(permit);
            (i, record)
        });
    }
    let mut keys = Vec::with_capacity(config.requests as usize);
    while let Some(done) = tasks.join_next().await {
        keys.push(done?);
    }
    keys.sort_by_key(|(i, _)| *i);
    Ok(Load {
        keys: keys.into_iter().map(|(_, r)| r).collect(),
        stats,
        elapsed: started.elapsed(),
        started,
    })
}

#[derive(Debug, Clone, Copy)]
struct Plan {
    double_tap: bool,
    impatient: bool,
    replay: bool,
}

async fn one_key(ctx: &Ctx, record: KeyRecord, format: &str, plan: Plan, rng: StdRng) -> KeyRecord {
    let body = serde_json::json!({"tenant": record.tenant, "format": format});
    let shared = Mutex::new(record);
    let first = Instant::now();
    let send = |impatient: bool, seed: u64| {
        send_until_202(
            ctx,
            &shared,
            &body,
            impatient,
            first,
            StdRng::seed_from_u64(seed),
        )
    };
    let mut rng = rng;
    let (a, b) = (rng.random(), rng.random());
    if plan.impatient {
        ctx.stats.impatient.fetch_add(1, Relaxed);
    }
    if plan.double_tap {
        ctx.stats.double_taps.fetch_add(1, Relaxed);
        tokio::join!(send(plan.impatient, a), send(false, b));
    } else {
        send(plan.impatient, a).await;
    }
    let got = !shared.lock().expect("record lock").message_ids.is_empty();
    if plan.replay && got {
        ctx.stats.replays_asked.fetch_add(1, Relaxed);
        send(false, b ^ 1).await;
    }
    shared.into_inner().expect("record lock")
}

/// Sends until a 202 (true), an unexpected answer or a stall (false).
async fn send_until_202(
    ctx: &Ctx,
    record: &Mutex<KeyRecord>,
    body: &serde_json::Value,
    impatient: bool,
    first: Instant,
    mut rng: StdRng,
) -> bool {
    let key = record.lock().expect("record lock").key.clone();
    let stats = &ctx.stats;
    for attempt in 0u32.. {
        if ctx.stalled() {
            return false;
        }
        // Impatient: the first two sends give up after a few milliseconds,
        // often while the API is publishing; later ones wait normally.
        let timeout = if impatient && attempt < 2 {
            let (lo, hi) = ctx.short_timeout_ms;
            Duration::from_millis(rng.random_range(lo..=hi.max(lo)))
        } else {
            ctx.timeout
        };
        let port = ctx.api_ports[rng.random_range(0..ctx.api_ports.len())];
        stats.sends.fetch_add(1, Relaxed);
        let sent_at = Instant::now();
        let sent = ctx
            .http
            .post(format!("http://127.0.0.1:{port}/api/exports"))
            .header("Idempotency-Key", &key)
            .json(body)
            .timeout(timeout)
            .send()
            .await;
        let wait = match sent {
            Ok(resp) => {
                let status = resp.status().as_u16();
                let header = |name: &str| {
                    resp.headers()
                        .get(name)
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned)
                };
                let replayed = header("idempotent-replayed").is_some_and(|v| v == "true");
                let retry_after = header("retry-after").and_then(|v| v.parse::<u64>().ok());
                let text = match resp.text().await {
                    Ok(t) => t,
                    Err(e) if e.is_timeout() => {
                        stats.timeouts.fetch_add(1, Relaxed);
                        continue;
                    }
                    Err(_) => {
                        stats.conn_errors.fetch_add(1, Relaxed);
                        continue;
                    }
                };
                match status {
                    202 => {
                        ctx.answered();
                        stats.accepted.fetch_add(1, Relaxed);
                        if replayed {
                            stats.replayed.fetch_add(1, Relaxed);
                        }
                        let id = serde_json::from_str::<serde_json::Value>(&text)
                            .ok()
                            .and_then(|v| v["message_id"].as_str().map(str::to_owned))
                            .unwrap_or_else(|| format!("<no message_id in {text:?}>"));
                        let first_202 = {
                            let mut r = record.lock().expect("record lock");
                            r.message_ids.push(id);
                            r.message_ids.len() == 1
                        };
                        ctx.record_latency(sent_at, first, first_202);
                        return true;
                    }
                    409 => {
                        stats.in_flight.fetch_add(1, Relaxed);
                        Duration::from_secs(retry_after.unwrap_or(1).min(5))
                    }
                    500..=599 => {
                        stats.server_errors.fetch_add(1, Relaxed);
                        backoff(attempt, &mut rng)
                    }
                    _ => {
                        record
                            .lock()
                            .expect("record lock")
                            .odd_answers
                            .push(format!("{status} {text}"));
                        return false;
                    }
                }
            }
            Err(e) if e.is_timeout() => {
                stats.timeouts.fetch_add(1, Relaxed);
                Duration::from_millis(rng.random_range(0..20))
            }
            Err(_) => {
                stats.conn_errors.fetch_add(1, Relaxed);
                backoff(attempt, &mut rng)
            }
        };
        tokio::time::sleep(wait).await;
    }
    false
}

/// 25 ms doubling to 800 ms, with full jitter.
fn backoff(attempt: u32, rng: &mut StdRng) -> Duration {
    let cap = 25u64 << attempt.min(5);
    Duration::from_millis(rng.random_range(cap / 2..=cap))
}
