//! The cron scenario: schedules firing every second on the servers under
//! chaos (kills, PostgreSQL restarts and failovers, proxy cuts), then a
//! count of the messages each tick published — exactly one each.
//!
//! At the start, [`start`] creates the queue [`QUEUE`] (no consumer reads
//! it) and [`SCHEDULES`] on it. Each run's message carries the dedupe key
//! `cron:<job_id>:<tick>`, so at the end [`check`] reads, in one snapshot
//! of the queue database, every message of the queue (its key names its
//! schedule and tick) and each schedule's `run_count` (the runs that
//! advanced it):
//! - a tick with two messages is **duplicated**;
//! - a schedule with more advanced runs than ticks with a message has
//!   **lost** runs (one advanced half-fired run is allowed the other way:
//!   a firing caught between its publish and its advance by the snapshot);
//! - ticks between two fired ones that have no message were **collapsed**:
//!   no server could fire them then (all killed, or PostgreSQL down), and
//!   the first firing after carried the earliest (docs/cron.md). Reported,
//!   not failed.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::cluster;
use crate::latency::Percentiles;

/// The queue the schedules publish into.
pub const QUEUE: &str = "chaos-cron";
/// The schedules: expression, and its period in seconds.
pub const SCHEDULES: &[(&str, i64)] = &[("* * * * * *", 1), ("*/2 * * * * *", 2)];

/// The schedules created.
#[derive(Debug, Clone, Default)]
pub struct Setup {
    /// Each schedule's id and period.
    pub jobs: Vec<(String, i64)>,
}

/// What the check found.
#[derive(Debug, Clone, Default)]
pub struct Findings {
    /// Schedules checked.
    pub schedules: usize,
    /// Ticks that published a message.
    pub ticks_fired: u64,
    /// Messages in the queue.
    pub messages: u64,
    /// The fewest and the most messages of one fired tick.
    pub min_per_tick: u64,
    /// See `min_per_tick`.
    pub max_per_tick: u64,
    /// Ticks with more than one message: (job, tick, messages).
    pub duplicated: Vec<(String, String, u64)>,
    /// Runs advanced without a message of their tick, per schedule.
    pub lost: u64,
    /// Ticks published but not yet advanced at the snapshot.
    pub half_fired: u64,
    /// Ticks skipped because no server could fire them then.
    pub collapsed: u64,
    /// Messages whose key names no schedule of the run.
    pub stray: u64,
    /// How late the runs were published, ms ([`lateness`]).
    pub lateness: Percentiles,
}

impl Findings {
    /// Exactly one message per fired tick, none lost, none stray.
    pub fn passed(&self) -> bool {
        self.ticks_fired > 0
            && self.duplicated.is_empty()
            && self.lost == 0
            && self.stray == 0
            && self.max_per_tick == 1
    }
}

/// Creates the queue and the schedules through server `port`, retrying
/// while it starts.
pub async fn start(port: u16) -> anyhow::Result<Setup> {
    let http = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(10))
        .build()?;
    let url = |path: &str| format!("http://127.0.0.1:{port}{path}");
    let call = |path: String, body: serde_json::Value| {
        let http = http.clone();
        async move {
            for _ in 0..50 {
                let answer = http
                    .post(&path)
                    .bearer_auth(crate::API_KEY)
                    .json(&body)
                    .send()
                    .await;
                if let Ok(resp) = answer
                    && resp.status().is_success()
                    && let Ok(v) = resp.json::<serde_json::Value>().await
                {
                    return Ok(v);
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            anyhow::bail!("{path} did not succeed")
        }
    };
    call(url("/v1/queue/create"), serde_json::json!({"name": QUEUE})).await?;
    let mut setup = Setup::default();
    for (i, (expr, period)) in SCHEDULES.iter().enumerate() {
        let v = call(
            url("/v1/cron/create"),
            serde_json::json!({
                "cron_expr": expr, "queue": QUEUE, "payload": {"schedule": i},
                // a retried create answers the first schedule
                "idempotency_key": format!("chaos-cron-{i}"),
            }),
        )
        .await?;
        let id = v["data"]["job_id"]
            .as_str()
            .ok_or_else(|| anyhow::anyhow!("cron create answered {v}"))?;
        setup.jobs.push((id.to_owned(), *period));
    }
    Ok(setup)
}

/// Counts the messages per tick and the runs per schedule (see the module
/// doc), in one snapshot of the queue database.
pub async fn check(setup: &Setup, queue_url: &str) -> anyhow::Result<Findings> {
    let mut db = cluster::connect(queue_url, Duration::from_secs(30)).await?;
    let tx = db
        .build_transaction()
        .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
        .start()
        .await?;
    let rows = tx
        .query(
            "SELECT m.idempotency_key, (extract(epoch FROM m.created_at) * 1000)::float8 \
             FROM onceq_messages m \
             JOIN onceq_queues q ON q.id = m.queue_id WHERE q.name = $1 AND q.project = $2",
            &[&QUEUE, &crate::PROJECT],
        )
        .await?;
    let keys: Vec<String> = rows
        .iter()
        .map(|r| r.get::<_, Option<String>>(0).unwrap_or_default())
        .collect();
    let published_ms: Vec<f64> = rows.iter().map(|r| r.get(1)).collect();
    let mut run_counts = BTreeMap::new();
    for (id, _) in &setup.jobs {
        let n: i64 = tx
            .query_one("SELECT run_count FROM onceq_cron_jobs WHERE id = $1", &[id])
            .await?
            .get(0);
        run_counts.insert(id.clone(), n as u64);
    }
    tx.commit().await?;
    let mut f = count(setup, &keys, &run_counts);
    f.lateness = lateness(&keys, &published_ms);
    Ok(f)
}

/// How late each run was published: its message's `created_at` minus the
/// tick its key names (a run that fired on a later server pass, or after
/// a restart, is late by that much; collapsed ticks have no message).
pub fn lateness(keys: &[String], published_ms: &[f64]) -> Percentiles {
    let late = keys
        .iter()
        .zip(published_ms)
        .filter_map(|(key, at)| {
            let tick = key.splitn(3, ':').nth(2)?.parse::<jiff::Timestamp>().ok()?;
            Some((at - tick.as_millisecond() as f64).max(0.0) as u64)
        })
        .collect();
    Percentiles::of(late)
}

/// The check's arithmetic, on the keys of the queue's messages and each
/// schedule's `run_count`.
pub fn count(setup: &Setup, keys: &[String], run_counts: &BTreeMap<String, u64>) -> Findings {
    let mut f = Findings {
        schedules: setup.jobs.len(),
        messages: keys.len() as u64,
        min_per_tick: u64::MAX,
        ..Findings::default()
    };
    // job -> tick -> messages
    let mut per_tick: BTreeMap<&str, BTreeMap<&str, u64>> = BTreeMap::new();
    for key in keys {
        let mut parts = key.splitn(3, ':');
        match (parts.next(), parts.next(), parts.next()) {
            (Some("cron"), Some(job), Some(tick)) if run_counts.contains_key(job) => {
                *per_tick.entry(job).or_default().entry(tick).or_default() += 1;
            }
            _ => f.stray += 1,
        }
    }
    for (job, period) in &setup.jobs {
        let ticks = per_tick.remove(job.as_str()).unwrap_or_default();
        let fired = ticks.len() as u64;
        f.ticks_fired += fired;
        for (tick, &n) in &ticks {
            f.min_per_tick = f.min_per_tick.min(n);
            f.max_per_tick = f.max_per_tick.max(n);
            if n > 1 {
                f.duplicated.push((job.clone(), (*tick).to_owned(), n));
            }
        }
        let advanced = run_counts.get(job).copied().unwrap_or(0);
        f.lost += advanced.saturating_sub(fired);
        f.half_fired += fired.saturating_sub(advanced);
        let times: Vec<i64> = ticks
            .keys()
            .filter_map(|t| t.parse::<jiff::Timestamp>().ok())
            .map(|t| t.as_second())
            .collect();
        for pair in times.windows(2) {
            f.collapsed += ((pair[1] - pair[0]) / period).saturating_sub(1) as u64;
        }
    }
    if f.min_per_tick == u64::MAX {
        f.min_per_tick = 0;
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> Setup {
        Setup {
            jobs: vec![("cron_a".into(), 1), ("cron_b".into(), 2)],
        }
    }

    fn key(job: &str, tick: &str) -> String {
        format!("cron:{job}:{tick}")
    }

    #[test]
    fn one_message_per_tick_passes_and_gaps_are_collapsed_ticks() {
        let keys = vec![
            key("cron_a", "2026-01-01T00:00:01Z"),
            key("cron_a", "2026-01-01T00:00:02Z"),
            key("cron_a", "2026-01-01T00:00:05Z"),
            key("cron_b", "2026-01-01T00:00:02Z"),
        ];
        let runs = BTreeMap::from([("cron_a".into(), 3), ("cron_b".into(), 1)]);
        let f = count(&setup(), &keys, &runs);
        assert!(f.passed(), "{f:?}");
        assert_eq!((f.ticks_fired, f.min_per_tick, f.max_per_tick), (4, 1, 1));
        assert_eq!(f.collapsed, 2, "00:00:03 and :04");
    }

    #[test]
    fn lateness_is_publish_time_minus_tick() {
        let keys = vec![
            key("cron_a", "2026-01-01T00:00:01Z"),
            key("cron_a", "2026-01-01T00:00:02Z"),
            "stray".into(),
        ];
        let tick = |s: i64| (1_767_225_600 + s) as f64 * 1000.0;
        let at = [tick(1) + 40.0, tick(2) + 900.0, 0.0];
        let p = lateness(&keys, &at);
        assert_eq!((p.n, p.p50, p.max), (2, 40, 900));
    }

    #[test]
    fn a_tick_twice_or_a_run_without_its_message_fails() {
        let keys = vec![
            key("cron_a", "2026-01-01T00:00:01Z"),
            key("cron_a", "2026-01-01T00:00:01Z"),
        ];
        let runs = BTreeMap::from([("cron_a".into(), 1), ("cron_b".into(), 2)]);
        let f = count(&setup(), &keys, &runs);
        assert!(!f.passed());
        assert_eq!(f.max_per_tick, 2);
        assert_eq!(f.duplicated.len(), 1);
        assert_eq!(f.lost, 2, "cron_b advanced twice with no message");
    }
}
