//! What a run does: sizes, client behaviour, the fault schedule, the
//! pipeline's timings, and the `--break` switches.
//!
//! [`Config::small`] is what the test suite runs (a few faults of every kind
//! in well under a minute); [`Config::large`] is the documented long run.
//! [`Args`] is the command line: a preset plus optional overrides.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, ValueEnum};

/// A preset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Size {
    /// A few hundred requests, a few faults of every kind: the CI run.
    Small,
    /// Tens of thousands of requests, a fault every few seconds.
    Large,
}

/// Which build of the exports app runs as the APIs and workers: the same
/// route and worker, the same environment, the same `exports` table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum App {
    /// `exports api` / `exports worker` (examples/exports, on the `onceq`
    /// crate).
    #[default]
    Rust,
    /// `node api.mjs` / `node worker.mjs` (examples/exports-node, on the
    /// `onceq` npm package).
    Node,
}

/// A protection switched off, to show that the checker notices (teeth).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Break {
    /// The API without its request ledger (`EXPORTS_UNSAFE_SKIP_LEDGER=1`):
    /// every send publishes a new job.
    Ledger,
    /// Workers without job facts (`EXPORTS_UNSAFE_NAIVE_WORKER=1`): every
    /// redelivery builds the export again.
    Facts,
}

/// How often each kind of fault fires; `None` = never. Each kind has its own
/// timer, jittered by ±50 %.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Schedule {
    /// SIGKILL a random `onceq serve`, restart it after the pause.
    pub kill_server: Option<Duration>,
    /// SIGKILL a random `exports api`.
    pub kill_api: Option<Duration>,
    /// SIGKILL a random `exports worker`.
    pub kill_worker: Option<Duration>,
    /// Stop PostgreSQL with `-m fast`, start it after the pause.
    pub pg_fast: Option<Duration>,
    /// Stop PostgreSQL with `-m immediate` (a crash; recovery on start).
    pub pg_immediate: Option<Duration>,
    /// Cut every live connection of a random proxy.
    pub cut: Option<Duration>,
    /// SIGKILL the primary PostgreSQL, promote its synchronous standby after
    /// the pause, build a new standby. Any value runs PostgreSQL as an HA
    /// pair (see [`crate::cluster`]). Under `--patroni`: SIGKILL the
    /// leader node (Patroni and its PostgreSQL), Patroni promotes a
    /// synchronous standby by itself, the node is started again after the
    /// pause and rejoins.
    pub failover: Option<Duration>,
    /// Under `--patroni` only: SIGKILL an etcd member (of three), restart
    /// it after the pause.
    pub kill_etcd: Option<Duration>,
}

impl Schedule {
    /// How often `kind` fires; `None` = never.
    pub fn every(&self, kind: crate::faults::Kind) -> Option<Duration> {
        use crate::faults::Kind;
        match kind {
            Kind::KillServer => self.kill_server,
            Kind::KillApi => self.kill_api,
            Kind::KillWorker => self.kill_worker,
            Kind::PgFast => self.pg_fast,
            Kind::PgImmediate => self.pg_immediate,
            Kind::Cut => self.cut,
            Kind::Failover => self.failover,
            Kind::KillEtcd => self.kill_etcd,
        }
    }
}

/// Everything a run needs. Build one with [`Config::small`] or
/// [`Config::large`] and adjust fields.
#[derive(Debug, Clone)]
pub struct Config {
    /// Distinct export requests (distinct `Idempotency-Key`s).
    pub requests: u64,
    /// Requests the client has open at once.
    pub concurrency: usize,
    /// Requests started per second (0 = as fast as `concurrency` allows).
    /// Pacing spreads the load over the fault schedule.
    pub rate: f64,
    /// `onceq serve` processes on the one queue database (1 or 2).
    pub servers: usize,
    /// `exports api` processes.
    pub apis: usize,
    /// `exports worker` processes.
    pub workers: usize,
    /// Share of requests sent twice at once (double tap).
    pub double_tap: f64,
    /// Share of requests whose first sends time out on the client
    /// (a timeout of `short_timeout`), then are retried.
    pub impatient: f64,
    /// Share of requests sent once more after their 202 (expect a replay).
    pub replay: f64,
    /// The client's normal per-send timeout.
    pub timeout: Duration,
    /// The impatient sends' timeout is drawn from this range, in ms.
    pub short_timeout_ms: (u64, u64),
    /// The fault schedule.
    pub schedule: Schedule,
    /// PostgreSQL is a Patroni cluster (three nodes in strict synchronous
    /// mode on three etcd members) instead of a pair failed over by hand
    /// (see [`crate::cluster`] and [`Config::with_patroni`]).
    pub patroni: bool,
    /// How long a killed process (or PostgreSQL) stays down.
    pub pause: Duration,
    /// Work per export on normal workers (`EXPORTS_WORK_MS`).
    pub work_ms: u64,
    /// Normal workers' message lease (`WORKER_VISIBILITY_SECS`).
    pub visibility_secs: u32,
    /// Workers (the first `slow_workers`) whose work outlasts their lease:
    /// `slow_work_ms` > `slow_visibility_secs`, with a heartbeat
    /// (`slow_heartbeat_ms`) too late to save it, so the queue redelivers
    /// while they are still busy.
    pub slow_workers: usize,
    /// Work per export on slow workers.
    pub slow_work_ms: u64,
    /// Slow workers' message lease.
    pub slow_visibility_secs: u32,
    /// Slow workers' heartbeat period.
    pub slow_heartbeat_ms: u64,
    /// Job-fact lease (`WORKER_FACT_LEASE_SECS`): how soon a killed
    /// worker's fact can be taken over.
    pub fact_lease_secs: u64,
    /// Jobs per worker at once (`WORKER_CONCURRENCY`).
    pub worker_concurrency: usize,
    /// The API's claim lease (`EXPORTS_LEASE_SECS`): how soon a request
    /// cut off mid-flight can be retried.
    pub api_lease_secs: u64,
    /// The servers' lease reaper period (`--lease-reap-ms`).
    pub lease_reap_ms: u64,
    /// The app under test.
    pub app: App,
    /// A protection to switch off.
    pub broken: Option<Break>,
    /// The client gives up on the keys still without a 202 once no key
    /// has had a 202 for this long (the pipeline stopped answering); a slow
    /// run that keeps answering runs on.
    pub load_deadline: Duration,
    /// The drain gives up after this long.
    pub drain_deadline: Duration,
    /// Where logs go (default: a new directory under the system temp dir).
    pub run_dir: Option<PathBuf>,
    /// The `onceq` binary (default: next to this one).
    pub onceq_bin: Option<PathBuf>,
    /// The `exports` binary (default: next to this one).
    pub exports_bin: Option<PathBuf>,
    /// The Node app's directory (default: examples/exports-node of this
    /// source tree).
    pub node_app_dir: Option<PathBuf>,
    /// Random seed (default: from the clock). Faults and timings still
    /// depend on the scheduler, so a seed does not replay a run exactly.
    pub seed: Option<u64>,
    /// Show a progress bar (only drawn on a terminal anyway).
    pub progress: bool,
    /// A hostile tenant beside the load (`--hostile`, see
    /// [`crate::hostile`]); `None`: the victim alone.
    pub hostile: Option<crate::hostile::Sizes>,
    /// More arguments for every `onceq serve` (after the run's own), e.g.
    /// a cap changed or switched off.
    pub server_args: Vec<String>,
}

/// Seconds between the small run's failovers: the first fires 4–12 s in
/// (±50 %), inside the ~15 s load, so every small run has at least one;
/// rarely more, as each costs a base backup.
const FAILOVER_SMALL: f64 = 8.0;

/// Under `--patroni`, seconds between leader kills and between etcd member
/// kills, small run and large. Each leader kill holds the cluster until the
/// node is back and synchronous (~20-30 s), so they come no faster than
/// that whatever the schedule says.
const PATRONI_SMALL: (f64, f64) = (8.0, 6.0);
const PATRONI_LARGE: (f64, f64) = (45.0, 20.0);

impl Config {
    /// This run on a Patroni cluster: PostgreSQL's faults become
    /// Patroni's — the leader node SIGKILLed (Patroni promotes a
    /// synchronous standby; `failover`) and an etcd member SIGKILLed
    /// (`kill_etcd`); restarts of PostgreSQL behind Patroni's back
    /// (`pg_fast`, `pg_immediate`) are not done, as Patroni would undo
    /// them. Every other fault stays.
    pub fn with_patroni(mut self, size: Size) -> Config {
        let (leader, etcd) = match size {
            Size::Small => PATRONI_SMALL,
            Size::Large => PATRONI_LARGE,
        };
        self.patroni = true;
        self.schedule.pg_fast = None;
        self.schedule.pg_immediate = None;
        self.schedule.failover = Some(Duration::from_secs_f64(leader));
        self.schedule.kill_etcd = Some(Duration::from_secs_f64(etcd));
        if size == Size::Small {
            // A leader kill is ~10 s without writes: the load and drain
            // get the time the client would give it.
            self.load_deadline = Duration::from_secs(90);
            self.drain_deadline = Duration::from_secs(90);
        }
        self
    }

    /// The CI run: 300 requests over ~15 s, 2 servers, 2 APIs, 2 workers
    /// (one slow), every kind of fault every few seconds.
    pub fn small() -> Config {
        let every = |secs: f64| Some(Duration::from_secs_f64(secs));
        Config {
            requests: 300,
            concurrency: 16,
            rate: 20.0,
            servers: 2,
            apis: 2,
            workers: 2,
            double_tap: 0.15,
            impatient: 0.15,
            replay: 0.1,
            timeout: Duration::from_secs(5),
            short_timeout_ms: (2, 60),
            schedule: Schedule {
                kill_server: every(5.0),
                kill_api: every(4.0),
                kill_worker: every(4.0),
                pg_fast: every(7.0),
                pg_immediate: every(7.0),
                cut: every(3.0),
                failover: every(FAILOVER_SMALL),
                kill_etcd: None,
            },
            patroni: false,
            pause: Duration::from_millis(400),
            work_ms: 5,
            visibility_secs: 2,
            slow_workers: 1,
            slow_work_ms: 1_300,
            slow_visibility_secs: 1,
            slow_heartbeat_ms: 1_500,
            fact_lease_secs: 3,
            worker_concurrency: 8,
            api_lease_secs: 2,
            lease_reap_ms: 200,
            app: App::Rust,
            broken: None,
            load_deadline: Duration::from_secs(60),
            drain_deadline: Duration::from_secs(45),
            run_dir: None,
            onceq_bin: None,
            exports_bin: None,
            node_app_dir: None,
            seed: None,
            progress: false,
            hostile: None,
            server_args: Vec::new(),
        }
    }

    /// The long run: 20 000 requests at 100/s, 2 servers, 3 APIs, 4 workers
    /// (one slow), a fault about every second and a half.
    pub fn large() -> Config {
        let every = |secs: f64| Some(Duration::from_secs_f64(secs));
        Config {
            requests: 20_000,
            concurrency: 64,
            rate: 100.0,
            apis: 3,
            workers: 4,
            schedule: Schedule {
                kill_server: every(8.0),
                kill_api: every(8.0),
                kill_worker: every(8.0),
                pg_fast: every(30.0),
                pg_immediate: every(30.0),
                cut: every(5.0),
                failover: every(30.0),
                kill_etcd: None,
            },
            patroni: false,
            load_deadline: Duration::from_secs(1_800),
            drain_deadline: Duration::from_secs(300),
            progress: true,
            ..Config::small()
        }
    }

    /// Runs `app` as the APIs and workers. The Node app's processes take
    /// about a second to start (several on a loaded machine) where the Rust
    /// binary takes milliseconds: killed as often as the Rust ones, its
    /// APIs would be down for most of the run and the client would give up
    /// on keys. So they are killed half as often; every other fault is the
    /// same.
    pub fn with_app(mut self, app: App) -> Config {
        self.app = app;
        if app == App::Node {
            let s = &mut self.schedule;
            for d in [&mut s.kill_api, &mut s.kill_worker].into_iter().flatten() {
                *d *= 2;
            }
        }
        self
    }

    /// Runs a hostile tenant of `sizes` beside the load
    /// ([`crate::hostile`]).
    pub fn with_hostile(mut self, sizes: crate::hostile::Sizes) -> Config {
        self.hostile = Some(sizes);
        self
    }

    /// Switches `layer` off and arranges the load so that the missing layer
    /// is exercised: double taps and client timeouts for the ledger; work
    /// longer than the lease on every worker for the facts.
    pub fn with_break(mut self, layer: Break) -> Config {
        self.broken = Some(layer);
        match layer {
            Break::Ledger => {
                self.double_tap = self.double_tap.max(0.3);
                self.impatient = self.impatient.max(0.3);
            }
            Break::Facts => {
                // The naive worker takes 10 messages per poll and works
                // them one after another: with 300 ms each under a 1 s
                // lease, the tail of every batch is redelivered to the
                // other worker while the first is still busy.
                self.slow_workers = self.workers;
                self.slow_work_ms = 300;
                self.slow_visibility_secs = 1;
            }
        }
        self
    }
}

/// `chaos [--size small|large] [overrides…]`.
#[derive(Debug, Parser)]
#[command(
    name = "chaos",
    about = "Kill, cut and restart the onceq pipeline under load; count lost and duplicated work."
)]
pub struct Args {
    /// The preset the other flags override.
    #[arg(long, value_enum, default_value = "small")]
    pub size: Size,
    /// The exports app to run: the Rust one (`exports`) or the Node one
    /// (`node examples/exports-node/{api,worker}.mjs`).
    #[arg(long, value_enum, default_value = "rust")]
    pub app: App,
    /// Switch a protection off (teeth): the run must then FAIL.
    #[arg(long = "break", value_enum)]
    pub broken: Option<Break>,
    /// Distinct requests.
    #[arg(long)]
    pub requests: Option<u64>,
    /// Client requests open at once.
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Requests started per second (0 = unpaced).
    #[arg(long)]
    pub rate: Option<f64>,
    /// `onceq serve` processes (1 or 2).
    #[arg(long)]
    pub servers: Option<usize>,
    /// `exports api` processes.
    #[arg(long)]
    pub apis: Option<usize>,
    /// `exports worker` processes.
    #[arg(long)]
    pub workers: Option<usize>,
    /// Of them, workers whose work outlasts their lease.
    #[arg(long)]
    pub slow_workers: Option<usize>,
    /// Seconds between server kills (0 = never).
    #[arg(long)]
    pub kill_server_every: Option<f64>,
    /// Seconds between API kills (0 = never).
    #[arg(long)]
    pub kill_api_every: Option<f64>,
    /// Seconds between worker kills (0 = never).
    #[arg(long)]
    pub kill_worker_every: Option<f64>,
    /// Seconds between fast PostgreSQL restarts (0 = never).
    #[arg(long)]
    pub pg_fast_every: Option<f64>,
    /// Seconds between immediate PostgreSQL restarts (0 = never).
    #[arg(long)]
    pub pg_immediate_every: Option<f64>,
    /// Seconds between proxy cuts (0 = never).
    #[arg(long)]
    pub cut_every: Option<f64>,
    /// Seconds between PostgreSQL failovers (0 = never, and PostgreSQL runs
    /// as one node instead of an HA pair). Under `--patroni`: between
    /// SIGKILLs of the leader node.
    #[arg(long)]
    pub failover_every: Option<f64>,
    /// PostgreSQL as a Patroni cluster: three nodes in strict synchronous
    /// mode on three etcd members, found through every node's address
    /// (`target_session_attrs=read-write`); faults: the leader killed,
    /// etcd members killed, every other fault but PostgreSQL restarts.
    #[arg(long)]
    pub patroni: bool,
    /// Under `--patroni`: seconds between SIGKILLs of an etcd member
    /// (0 = never).
    #[arg(long)]
    pub kill_etcd_every: Option<f64>,
    /// Scale every fault interval by this factor (0.5 = twice as often).
    #[arg(long)]
    pub fault_scale: Option<f64>,
    /// Milliseconds a killed process or PostgreSQL stays down.
    #[arg(long)]
    pub pause_ms: Option<u64>,
    /// Share of double taps (0..1).
    #[arg(long)]
    pub double_tap: Option<f64>,
    /// Share of requests whose first sends time out (0..1).
    #[arg(long)]
    pub impatient: Option<f64>,
    /// Share of requests re-sent after their 202 (0..1).
    #[arg(long)]
    pub replay: Option<f64>,
    /// Seconds without any 202 after which the client gives up on the
    /// keys still unanswered.
    #[arg(long)]
    pub load_deadline_secs: Option<u64>,
    /// Seconds the drain waits for the queue to empty.
    #[arg(long)]
    pub drain_deadline_secs: Option<u64>,
    /// Where to write logs (default: a new temp directory).
    #[arg(long)]
    pub run_dir: Option<PathBuf>,
    /// The `onceq` binary (default: beside `chaos`).
    #[arg(long, env = "ONCEQ_BIN")]
    pub onceq_bin: Option<PathBuf>,
    /// The `exports` binary (default: beside `chaos`).
    #[arg(long, env = "EXPORTS_BIN")]
    pub exports_bin: Option<PathBuf>,
    /// The Node app's directory, its dependencies installed (default:
    /// examples/exports-node of this source tree).
    #[arg(long, env = "EXPORTS_NODE_DIR")]
    pub node_app_dir: Option<PathBuf>,
    /// Random seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Run a hostile tenant (its own project and key) beside the load:
    /// parked long polls, push subscriptions and webhooks at a receiver
    /// that never answers, every-second schedules, no-op keyed calls, many
    /// queues. Its sizes follow `--size`.
    #[arg(long)]
    pub hostile: bool,
    /// With `--hostile`: long polls it keeps parked.
    #[arg(long, requires = "hostile")]
    pub hostile_long_polls: Option<usize>,
    /// With `--hostile`: queues it creates.
    #[arg(long, requires = "hostile")]
    pub hostile_queues: Option<usize>,
    /// With `--hostile`: its every-second queue schedules.
    #[arg(long, requires = "hostile")]
    pub hostile_schedules: Option<usize>,
    /// An argument for every `onceq serve` (repeat it), e.g.
    /// `--server-arg=--outbound-max-per-project=512`.
    #[arg(long = "server-arg", allow_hyphen_values = true)]
    pub server_args: Vec<String>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

impl Args {
    /// The preset with the overrides applied.
    pub fn resolve(self) -> Config {
        let mut c = match self.size {
            Size::Small => Config::small(),
            Size::Large => Config::large(),
        }
        .with_app(self.app);
        if self.patroni {
            c = c.with_patroni(self.size);
        }
        macro_rules! set {
            ($($field:ident),*) => { $(if let Some(v) = self.$field { c.$field = v; })* };
        }
        set!(
            requests,
            concurrency,
            rate,
            servers,
            apis,
            workers,
            slow_workers,
            double_tap,
            impatient,
            replay
        );
        let every = |v: f64| (v > 0.0).then(|| Duration::from_secs_f64(v));
        macro_rules! every {
            ($($flag:ident => $kind:ident),*) => {
                $(if let Some(v) = self.$flag { c.schedule.$kind = every(v); })*
            };
        }
        every!(
            kill_server_every => kill_server,
            kill_api_every => kill_api,
            kill_worker_every => kill_worker,
            pg_fast_every => pg_fast,
            pg_immediate_every => pg_immediate,
            cut_every => cut,
            failover_every => failover,
            kill_etcd_every => kill_etcd
        );
        if let Some(scale) = self.fault_scale.filter(|s| *s > 0.0) {
            let s = &mut c.schedule;
            for d in [
                &mut s.kill_server,
                &mut s.kill_api,
                &mut s.kill_worker,
                &mut s.pg_fast,
                &mut s.pg_immediate,
                &mut s.cut,
                &mut s.failover,
                &mut s.kill_etcd,
            ]
            .into_iter()
            .flatten()
            {
                *d = d.mul_f64(scale);
            }
        }
        if let Some(ms) = self.pause_ms {
            c.pause = Duration::from_millis(ms);
        }
        if let Some(s) = self.load_deadline_secs {
            c.load_deadline = Duration::from_secs(s);
        }
        if let Some(s) = self.drain_deadline_secs {
            c.drain_deadline = Duration::from_secs(s);
        }
        // After the overrides, so that `--break facts` slows every worker.
        if let Some(layer) = self.broken {
            c = c.with_break(layer);
        }
        c.slow_workers = c.slow_workers.min(c.workers);
        c.run_dir = self.run_dir;
        c.onceq_bin = self.onceq_bin;
        c.exports_bin = self.exports_bin;
        c.node_app_dir = self.node_app_dir;
        c.seed = self.seed;
        c.progress = !self.quiet;
        if self.hostile {
            let mut h = match self.size {
                Size::Small => crate::hostile::Sizes::small(),
                Size::Large => crate::hostile::Sizes::large(),
            };
            macro_rules! hostile {
                ($($flag:ident => $field:ident),*) => {
                    $(if let Some(v) = self.$flag { h.$field = v; })*
                };
            }
            hostile!(
                hostile_long_polls => long_polls,
                hostile_queues => queues,
                hostile_schedules => schedules
            );
            c = c.with_hostile(h);
        }
        c.server_args = self.server_args;
        c
    }
}
