//! The hostile tenant (`--hostile`): a second project on the same servers,
//! arriving a third of the way into the victim's load and behaving as
//! issue 26's attacker did — many parked long polls, push subscriptions
//! and account webhooks at a [`tarpit`] (accepts, reads, never answers),
//! every-second cron schedules (some of them task schedules at the
//! tarpit), no-op keyed calls with fresh `Idempotency-Key`s, and many
//! queues. The victim (the seed's pipeline, under every fault as before)
//! must still lose and duplicate nothing, answer every key and fire every
//! cron tick exactly once, and its latency must stay within a
//! [`Bound`] (reported beside what it was before the
//! tenant came).
//!
//! - [`api`]: the tenant's client, from several source addresses.
//! - [`setup`]: its key (`onceq keys create`) and everything it makes.
//! - [`load`]: its long polls and no-op calls, until the run stops.
//! - [`tarpit`]: the receiver that never answers.

pub mod api;
pub mod load;
pub mod setup;
pub mod tarpit;

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::cluster;
use crate::latency::Bound;

/// The hostile tenant's project.
pub const PROJECT: &str = "hostile";

/// How hostile.
#[derive(Debug, Clone, PartialEq)]
pub struct Sizes {
    /// Queues it creates (besides two named as the victim's and a paused
    /// one).
    pub queues: usize,
    /// Account webhooks at the tarpit, every event (at most 20).
    pub webhooks: usize,
    /// Queues with ten push subscriptions each at the tarpit.
    pub push_queues: usize,
    /// Messages published into each of them.
    pub push_messages: usize,
    /// Every-second queue schedules.
    pub schedules: usize,
    /// Every-second task schedules delivered to the tarpit.
    pub task_schedules: usize,
    /// Long polls kept parked.
    pub long_polls: usize,
    /// No-op keyed calls per second.
    pub noop_rate: f64,
    /// Source addresses (127.0.0.2 on).
    pub sources: usize,
    /// It arrives after this share of the victim's paced load.
    pub arrive_at: f64,
    /// The victim's latency bound with it there.
    pub bound: Bound,
}

impl Sizes {
    /// The test suite's: a few hundred of everything, kept short.
    pub fn small() -> Sizes {
        Sizes {
            queues: 100,
            webhooks: 20,
            push_queues: 3,
            push_messages: 200,
            schedules: 40,
            task_schedules: 3,
            long_polls: 300,
            noop_rate: 10.0,
            sources: 4,
            arrive_at: 1.0 / 3.0,
            bound: Bound {
                sends_p50: Duration::from_millis(2_500),
                keys_p50: Duration::from_secs(5),
            },
        }
    }

    /// The long run's: issue 26's numbers — thousands of queues and long
    /// polls (past the per-key cap), 1 000 schedules.
    pub fn large() -> Sizes {
        Sizes {
            queues: 2_000,
            push_queues: 10,
            push_messages: 500,
            schedules: 1_000,
            task_schedules: 20,
            long_polls: 2_400,
            noop_rate: 100.0,
            ..Sizes::small()
        }
    }
}

/// What the hostile tenant did and what it got.
#[derive(Debug, Clone, Default)]
pub struct Findings {
    /// Its sizes.
    pub sizes: Option<Sizes>,
    /// When it arrived, since the load began.
    pub arrived: Duration,
    /// What its setup made.
    pub made: setup::Made,
    /// Long polls: peak open, answered, 429, failed.
    pub polls: [u64; 4],
    /// No-op calls: sent, 2xx, 429, failed.
    pub noops: [u64; 4],
    /// When the long polls and the no-op calls started, after its arrival.
    pub load_from: [Duration; 2],
    /// The tarpit: accepted, peak open, bytes read.
    pub tarpit: [u64; 3],
    /// Runs its schedules published (messages keyed `cron:` in its queues).
    pub cron_runs: u64,
}

/// The tenant while it runs.
pub struct Running {
    task: tokio::task::JoinHandle<anyhow::Result<(Instant, setup::Made)>>,
    counters: Arc<load::Counters>,
    tarpit: Arc<tarpit::Tarpit>,
    sizes: Sizes,
    stop: CancellationToken,
}

/// Starts the tarpit now and the tenant after `after`: its key, its setup,
/// then its load on `ports` until [`Running::finish`].
pub async fn spawn(
    sizes: Sizes,
    onceq: PathBuf,
    database_url: String,
    ports: Vec<u16>,
    after: Duration,
    stop: CancellationToken,
) -> anyhow::Result<Running> {
    let tarpit = tarpit::Tarpit::start(stop.clone()).await?;
    let counters = Arc::new(load::Counters::default());
    let task = {
        let (sizes, counters, stop) = (sizes.clone(), counters.clone(), stop.clone());
        let url = format!("http://127.0.0.1:{}", tarpit.port);
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            let arrived = Instant::now();
            let key = setup::make_key(&onceq, &database_url).await?;
            let api = Arc::new(api::Api::new(ports, key, sizes.sources)?);
            let polls = async {
                let queues = setup::poll_queues(&api).await?;
                counters.polls_from_ms.store(ms_since(arrived), Relaxed);
                load::polls(&api, &queues, sizes.long_polls, &counters, &stop);
                anyhow::Ok(())
            };
            let noops = async {
                let job = setup::paused(&api).await?;
                counters.noops_from_ms.store(ms_since(arrived), Relaxed);
                // Runs on; `finish` cancels it.
                let (api, counters, stop) = (api.clone(), counters.clone(), stop.clone());
                tokio::spawn(async move {
                    load::noops(&api, &job, sizes.noop_rate, &counters, &stop).await;
                });
                anyhow::Ok(())
            };
            let (p, n, hooks, push, cron) = tokio::join!(
                polls,
                noops,
                setup::webhooks_and_queues(&api, &sizes, &url),
                setup::push(&api, &sizes, &url),
                setup::cron(&api, &sizes, &url),
            );
            p?;
            n?;
            hooks?;
            let made = setup::Made {
                published: push?,
                schedules_refused: cron?,
                took: arrived.elapsed(),
                given_up: api.given_up.lock().expect("given-up lock").clone(),
                ..setup::Made::default()
            };
            Ok((arrived, made))
        })
    };
    Ok(Running {
        task,
        counters,
        tarpit,
        sizes,
        stop,
    })
}

impl Running {
    /// Stops the tenant and counts what it did; `load_started` is when the
    /// victim's load began.
    pub async fn finish(self, load_started: Instant, queue_url: &str) -> anyhow::Result<Findings> {
        let (arrived, mut made) = self.task.await??;
        self.stop.cancel();
        census(queue_url, &mut made).await?;
        let (c, t) = (&self.counters, &self.tarpit);
        Ok(Findings {
            sizes: Some(self.sizes),
            arrived: arrived.saturating_duration_since(load_started),
            made,
            polls: [
                c.polls_peak.load(Relaxed),
                c.polls_answered.load(Relaxed),
                c.polls_capped.load(Relaxed),
                c.polls_failed.load(Relaxed),
            ],
            noops: [
                c.noops.load(Relaxed),
                c.noops_ok.load(Relaxed),
                c.noops_refused.load(Relaxed),
                c.noops_failed.load(Relaxed),
            ],
            load_from: [
                Duration::from_millis(c.polls_from_ms.load(Relaxed)),
                Duration::from_millis(c.noops_from_ms.load(Relaxed)),
            ],
            tarpit: [
                t.accepted.load(Relaxed),
                t.peak.load(Relaxed),
                t.bytes.load(Relaxed),
            ],
            cron_runs: made_runs(queue_url).await?,
        })
    }
}

fn ms_since(t: Instant) -> u64 {
    u64::try_from(t.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// What the tenant has in the database: its queues, webhooks, push
/// subscriptions, schedules and the webhook events still due.
async fn census(queue_url: &str, made: &mut setup::Made) -> anyhow::Result<()> {
    let db = cluster::connect(queue_url, Duration::from_secs(30)).await?;
    let count = async |sql: &str| -> anyhow::Result<u64> {
        let n: i64 = db.query_one(sql, &[&PROJECT]).await?.get(0);
        Ok(n as u64)
    };
    made.queues = count("SELECT count(*) FROM onceq_queues WHERE project = $1").await?;
    made.webhooks = count("SELECT count(*) FROM onceq_webhooks WHERE project = $1").await?;
    made.subscriptions = count(
        "SELECT count(*) FROM onceq_push_subscriptions s \
         JOIN onceq_queues q ON q.id = s.queue_id WHERE q.project = $1",
    )
    .await?;
    made.schedules = count("SELECT count(*) FROM onceq_cron_jobs WHERE project = $1").await?;
    made.events_pending = count(
        "SELECT count(*) FROM onceq_webhook_deliveries d \
         JOIN onceq_webhooks w ON w.id = d.webhook_id WHERE w.project = $1",
    )
    .await?;
    Ok(())
}

async fn made_runs(queue_url: &str) -> anyhow::Result<u64> {
    let db = cluster::connect(queue_url, Duration::from_secs(30)).await?;
    let n: i64 = db
        .query_one(
            "SELECT count(*) FROM onceq_messages m JOIN onceq_queues q ON q.id = m.queue_id \
             WHERE q.project = $1 AND m.idempotency_key LIKE 'cron:%'",
            &[&PROJECT],
        )
        .await?
        .get(0);
    Ok(n as u64)
}

impl fmt::Display for Findings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = &self.made;
        let [peak, answered, capped, failed] = self.polls;
        let [sent, ok, refused, nfailed] = self.noops;
        let [accepted, open, bytes] = self.tarpit;
        writeln!(
            f,
            "  hostile tenant (project {PROJECT:?}): arrived {:.1}s into the load, set up in {:.1}s",
            self.arrived.as_secs_f64(),
            m.took.as_secs_f64()
        )?;
        writeln!(
            f,
            "    has: {} queues (two named as the victim's), {} webhooks (every event) and {} push subscriptions at the tarpit, {} messages published to push, {} schedules ({} creates refused past the project's cap); {} webhook events still due",
            m.queues,
            m.webhooks,
            m.subscriptions,
            m.published,
            m.schedules,
            m.schedules_refused,
            m.events_pending
        )?;
        writeln!(
            f,
            "    long polls (wait_seconds 20, from {:.1}s after its arrival): peak {peak} open, {answered} answered, {capped} refused 429, {failed} failed (faults)",
            self.load_from[0].as_secs_f64()
        )?;
        writeln!(
            f,
            "    no-op keyed calls (fresh Idempotency-Keys, from {:.1}s): {sent} sent, {ok} answered 2xx, {refused} refused 429, {nfailed} failed (faults)",
            self.load_from[1].as_secs_f64()
        )?;
        writeln!(
            f,
            "    tarpit: {accepted} connections accepted, at most {open} open at once, {} KiB read, none answered",
            bytes / 1024
        )?;
        if m.given_up.0 > 0 {
            writeln!(
                f,
                "    setup calls given up (no answer through the chaos): {}, the last: {}",
                m.given_up.0, m.given_up.1
            )?;
        }
        write!(f, "    its schedules' runs published: {}", self.cron_runs)
    }
}
