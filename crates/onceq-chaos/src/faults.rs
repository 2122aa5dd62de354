//! The fault schedule: one timer per kind (interval from the
//! [`Schedule`](crate::config::Schedule), jittered ±50 %), running while the
//! client sends; the database's own faults take turns, each after a quiet
//! as long as the last one's outage (`DatabaseTurns`). The last kind of
//! fault, leases shorter than the work, is
//! not an event: it is how the slow workers are configured
//! ([`Config::slow_workers`](crate::Config::slow_workers)).

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use onceq_testdb::StopMode;
use rand::{Rng, SeedableRng, rngs::StdRng};
use tokio_util::sync::CancellationToken;

use crate::cluster::{Cluster, FailoverTimes};
use crate::pipeline::Pipeline;

/// A kind of fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `kill -9` of a random `onceq serve`.
    KillServer,
    /// `kill -9` of a random `exports api`.
    KillApi,
    /// `kill -9` of a random `exports worker`.
    KillWorker,
    /// PostgreSQL stopped with `-m fast`, then started.
    PgFast,
    /// PostgreSQL stopped with `-m immediate` (crash), then started.
    PgImmediate,
    /// Every live connection of a random proxy cut.
    Cut,
    /// The primary SIGKILLed, the synchronous standby promoted, a new
    /// standby built (an HA pair, see [`crate::cluster`]); under Patroni,
    /// the leader node SIGKILLed, Patroni promoting, the node restarted.
    Failover,
    /// An etcd member SIGKILLed, restarted after the pause (Patroni only).
    KillEtcd,
}

impl Kind {
    /// Every kind, in report order.
    pub const ALL: [Kind; 8] = [
        Kind::KillServer,
        Kind::KillApi,
        Kind::KillWorker,
        Kind::PgFast,
        Kind::PgImmediate,
        Kind::Cut,
        Kind::Failover,
        Kind::KillEtcd,
    ];

    fn index(self) -> usize {
        Kind::ALL.iter().position(|k| *k == self).unwrap_or(0)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::KillServer => "kill -9 onceq serve",
            Kind::KillApi => "kill -9 exports api",
            Kind::KillWorker => "kill -9 exports worker",
            Kind::PgFast => "postgres restart (fast)",
            Kind::PgImmediate => "postgres restart (immediate)",
            Kind::Cut => "proxy cut",
            Kind::Failover => "postgres failover (kill -9 primary, promote standby)",
            Kind::KillEtcd => "kill -9 etcd member",
        })
    }
}

/// Faults injected so far, by kind.
#[derive(Debug, Default)]
pub struct Counts {
    by_kind: [AtomicU64; Kind::ALL.len()],
    /// Connections the cuts closed.
    pub connections_cut: AtomicU64,
    /// The longest failover so far, by each of its times.
    pub failover_longest: std::sync::Mutex<FailoverTimes>,
}

impl Counts {
    /// How many of `kind`.
    pub fn get(&self, kind: Kind) -> u64 {
        self.by_kind[kind.index()].load(Relaxed)
    }

    /// All kinds together.
    pub fn total(&self) -> u64 {
        Kind::ALL.iter().map(|k| self.get(*k)).sum()
    }
}

/// Runs the schedule until `stop` is cancelled; resolves once every fault
/// in progress has finished (PostgreSQL is up again).
pub async fn run(
    config: &crate::Config,
    cluster: Arc<Cluster>,
    pipeline: Arc<Pipeline>,
    counts: Arc<Counts>,
    seed: u64,
    stop: CancellationToken,
) {
    let s = &config.schedule;
    let plan = [
        (Kind::KillServer, s.kill_server),
        (Kind::KillApi, s.kill_api),
        (Kind::KillWorker, s.kill_worker),
        (Kind::PgFast, s.pg_fast),
        (Kind::PgImmediate, s.pg_immediate),
        (Kind::Cut, s.cut),
        (Kind::Failover, s.failover),
        (Kind::KillEtcd, s.kill_etcd),
    ];
    let database = Arc::new(DatabaseTurns::default());
    let mut tasks = tokio::task::JoinSet::new();
    for (n, (kind, every)) in plan.into_iter().enumerate() {
        let Some(every) = every.filter(|d| !d.is_zero()) else {
            continue;
        };
        let (cluster, pipeline, counts, stop, database) = (
            cluster.clone(),
            pipeline.clone(),
            counts.clone(),
            stop.clone(),
            database.clone(),
        );
        let pause = config.pause;
        let mut rng = StdRng::seed_from_u64(seed.wrapping_add(n as u64 * 7919));
        tasks.spawn(async move {
            loop {
                let wait = every.mul_f64(rng.random_range(0.5..1.5));
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(wait) => {}
                }
                let _turn = match kind {
                    Kind::PgFast | Kind::PgImmediate | Kind::Failover => {
                        match database.turn(&stop).await {
                            Some(turn) => Some(turn),
                            None => return,
                        }
                    }
                    _ => None,
                };
                let fired = match kind {
                    Kind::KillServer => kill_one(&pipeline.servers, &mut rng).await,
                    Kind::KillApi => kill_one(&pipeline.apis, &mut rng).await,
                    Kind::KillWorker => kill_one(&pipeline.workers, &mut rng).await,
                    // PostgreSQL faults take turns (the cluster's lock).
                    Kind::PgFast | Kind::PgImmediate => {
                        let mode = if kind == Kind::PgFast {
                            StopMode::Fast
                        } else {
                            StopMode::Immediate
                        };
                        cluster.restart(mode, pause).await
                    }
                    Kind::KillEtcd => cluster.kill_etcd(pause, rng.random_range(0..3)).await,
                    Kind::Cut => {
                        let l = &pipeline.links[rng.random_range(0..pipeline.links.len())];
                        counts.connections_cut.fetch_add(l.cut(), Relaxed);
                        true
                    }
                    Kind::Failover => match cluster.failover(pause).await {
                        Some(t) => {
                            let mut longest =
                                counts.failover_longest.lock().expect("failover lock");
                            longest.promoted = longest.promoted.max(t.promoted);
                            longest.synchronous_again =
                                longest.synchronous_again.max(t.synchronous_again);
                            true
                        }
                        None => false,
                    },
                };
                if fired {
                    counts.by_kind[kind.index()].fetch_add(1, Relaxed);
                }
            }
        });
    }
    while tasks.join_next().await.is_some() {}
}

/// The database's faults (restarts and failovers) take turns, and each
/// waits, after the one before it ended, as long as that one lasted: the
/// database takes writes at least half of the run, however slow the
/// machine. Without this a loaded machine stretches every outage (a
/// failover's new synchronous standby took 14 s at a load average of 20,
/// longer than the 8 s between failovers), the load stretches with them,
/// and with it the count of faults: the database was down for most of
/// such a run and keys went unanswered whatever the app did. On an idle
/// machine an outage is a second or two and the schedule barely moves.
#[derive(Default)]
struct DatabaseTurns {
    /// When the next database fault may start.
    next: tokio::sync::Mutex<Option<tokio::time::Instant>>,
}

/// A database fault's turn: held while it runs; on drop, the next may
/// start after as long again.
struct Turn<'a> {
    next: tokio::sync::MutexGuard<'a, Option<tokio::time::Instant>>,
    started: tokio::time::Instant,
}

impl DatabaseTurns {
    /// Waits for the other database faults and the quiet after them; None
    /// when `stop` comes first.
    async fn turn(&self, stop: &CancellationToken) -> Option<Turn<'_>> {
        let next = tokio::select! {
            () = stop.cancelled() => return None,
            next = self.next.lock() => next,
        };
        if let Some(at) = *next {
            tokio::select! {
                () = stop.cancelled() => return None,
                () = tokio::time::sleep_until(at) => {}
            }
        }
        Some(Turn {
            next,
            started: tokio::time::Instant::now(),
        })
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let now = tokio::time::Instant::now();
        *self.next = Some(now + (now - self.started));
    }
}

/// Kills a random process of `procs` that is up; false when none is.
async fn kill_one(procs: &[Arc<crate::procs::Proc>], rng: &mut StdRng) -> bool {
    let up: Vec<_> = procs.iter().filter(|p| p.is_up()).collect();
    if up.is_empty() {
        return false;
    }
    up[rng.random_range(0..up.len())].kill9().await
}

/// How long to let a killed process come back, for callers that wait.
pub fn settle_time(config: &crate::Config) -> Duration {
    config.pause + Duration::from_millis(500)
}
