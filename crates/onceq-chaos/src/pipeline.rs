//! The topology of a run, built from a [`Config`]:
//!
//! ```text
//!   client ──▶ api0..apiN ──▶ [api->onceqK] ──▶ onceq0 / onceq1 ──▶ PostgreSQL (queue db)
//!                  └────────▶ [api->pg] ─────────────────────────▶ PostgreSQL (app db)
//!   worker0..workerM ──▶ [worker->onceqK] ──▶ onceq0 / onceq1
//!                  └────▶ [worker->pg] ──────────────────────────▶ PostgreSQL (app db)
//! ```
//!
//! `[…]` are [`Link`]s that faults cut. API `i` and worker `j` talk to
//! server `i % servers` and `j % servers`, so with two servers each side
//! is spread across both. The servers reach PostgreSQL directly: its
//! restarts and failovers are their fault to survive.
//!
//! With an HA pair ([`crate::cluster`]) every process gets a URL naming
//! both hosts with `target_session_attrs=read-write`; `[api->pg]` and
//! `[worker->pg]` are then one [`Proxy`] per host (their ports in the URL
//! in the hosts' order), cut together (see [`Link`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::cluster::{self, Cluster};
use crate::config::{App, Break, Config};
use crate::procs::{self, Proc, Spec};
use crate::proxy::{Link, Proxy};

/// How long a process gets to come up at the start.
const STARTUP: Duration = Duration::from_secs(60);

/// The binaries a run drives.
#[derive(Debug, Clone)]
pub struct Binaries {
    /// `onceq` (crate onceq-cli).
    pub onceq: PathBuf,
    /// How the app's API and worker start.
    pub app: AppCommand,
}

/// The program and arguments of the app's two processes.
#[derive(Debug, Clone)]
pub struct AppCommand {
    /// `exports`, or `node`.
    pub program: PathBuf,
    /// `["api"]`, or `[".../api.mjs"]`.
    pub api: Vec<String>,
    /// `["worker"]`, or `[".../worker.mjs"]`.
    pub worker: Vec<String>,
}

impl Binaries {
    /// From the config (flags / `ONCEQ_BIN` / `EXPORTS_BIN`), else next to
    /// the running executable: `target/<profile>/` for the `chaos` binary,
    /// its parent for a test binary in `target/<profile>/deps/`. For
    /// [`App::Node`], `node` (or `NODE_BIN`) and the Node app's scripts.
    pub fn locate(config: &Config) -> anyhow::Result<Binaries> {
        let find = |given: &Option<PathBuf>, name: &str| -> anyhow::Result<PathBuf> {
            if let Some(p) = given {
                anyhow::ensure!(p.is_file(), "{} does not exist", p.display());
                return Ok(p.clone());
            }
            let exe = std::env::current_exe()?;
            let dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
            let candidates = [dir.join(name), dir.join("..").join(name)];
            candidates
                .iter()
                .find(|p| p.is_file())
                .cloned()
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "no `{name}` binary beside {} (run `cargo build -p onceq-cli -p exports` \
                         with the same profile and target dir, or set ONCEQ_BIN / EXPORTS_BIN)",
                        exe.display()
                    )
                })
        };
        let app = match config.app {
            App::Rust => AppCommand {
                program: find(&config.exports_bin, "exports")?,
                api: vec!["api".into()],
                worker: vec!["worker".into()],
            },
            App::Node => node_app(config.node_app_dir.clone())?,
        };
        Ok(Binaries {
            onceq: find(&config.onceq_bin, "onceq")?,
            app,
        })
    }
}

/// `node api.mjs` / `node worker.mjs` in `dir` (default: this source
/// tree's examples/exports-node), once its dependencies are installed and
/// the package is built.
fn node_app(dir: Option<PathBuf>) -> anyhow::Result<AppCommand> {
    let dir = dir.unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/exports-node")
    });
    let dir = dir
        .canonicalize()
        .map_err(|e| anyhow::anyhow!("the Node app {}: {e}", dir.display()))?;
    anyhow::ensure!(
        dir.join("node_modules/onceq/dist/index.js").is_file(),
        "the Node app in {} is not ready: run `npm ci` there and `npm run build` in clients/node \
         (scripts/ensure-deps installs both)",
        dir.display()
    );
    let script = |name: &str| dir.join(name).to_string_lossy().into_owned();
    Ok(AppCommand {
        program: std::env::var_os("NODE_BIN").map_or_else(|| "node".into(), PathBuf::from),
        api: vec![script("api.mjs")],
        worker: vec![script("worker.mjs")],
    })
}

/// Every process and proxy of a run.
pub struct Pipeline {
    /// `onceq serve` processes.
    pub servers: Vec<Arc<Proc>>,
    /// Their ports (direct, for the drain's admin calls).
    pub server_ports: Vec<u16>,
    /// `exports api` processes.
    pub apis: Vec<Arc<Proc>>,
    /// Their ports (the client calls them directly).
    pub api_ports: Vec<u16>,
    /// `exports worker` processes.
    pub workers: Vec<Arc<Proc>>,
    /// Every path through proxies, what a cut picks from.
    pub links: Vec<Link>,
}

impl Pipeline {
    /// Starts everything and waits until it is up: servers listening, the
    /// app's tables created by a worker, APIs listening.
    pub async fn start(
        config: &Config,
        cluster: &Cluster,
        bins: &Binaries,
        run_dir: &Path,
        stop: &CancellationToken,
    ) -> anyhow::Result<Pipeline> {
        anyhow::ensure!((1..=2).contains(&config.servers), "servers must be 1 or 2");
        anyhow::ensure!(
            config.apis >= 1 && config.workers >= 1,
            "need an API and a worker"
        );
        let log = |name: &str| run_dir.join(format!("{name}.log"));
        let supervise = |spec: Spec| Proc::supervise(spec, config.pause, stop.child_token());

        let mut servers = Vec::new();
        let mut server_ports = Vec::new();
        for i in 0..config.servers {
            let port = procs::free_port()?;
            let name = format!("onceq{i}");
            servers.push(supervise(Spec {
                log: log(&name),
                name,
                program: bins.onceq.clone(),
                args: vec![
                    "serve".into(),
                    "--listen".into(),
                    format!("127.0.0.1:{port}"),
                    "--database-url".into(),
                    cluster.queue_url.clone(),
                    "--api-key".into(),
                    crate::API_KEY.into(),
                    "--lease-reap-ms".into(),
                    config.lease_reap_ms.to_string(),
                ]
                .into_iter()
                .chain(hostile_args(config))
                .chain(config.server_args.iter().cloned())
                .collect(),
                env: vec![("ONCEQ_LOG".into(), "info".into())],
            }));
            // One at a time: the first runs the migrations.
            procs::wait_port(port, STARTUP).await?;
            server_ports.push(port);
        }

        let mut links = Vec::new();
        // One proxy per upstream port, cut together; returns their ports.
        let mut link = async |name: String, upstreams: &[u16]| -> anyhow::Result<Vec<u16>> {
            let mut proxies = Vec::new();
            for (h, port) in upstreams.iter().enumerate() {
                let proxy_name = if upstreams.len() > 1 {
                    format!("{name}{h}")
                } else {
                    name.clone()
                };
                proxies.push(Proxy::start(&proxy_name, *port, stop.child_token()).await?);
            }
            let l = Link::new(&name, proxies);
            let ports = l.ports();
            links.push(l);
            Ok(ports)
        };
        let api_pg = cluster.app_url_via(&link("api->pg".into(), cluster.ports()).await?);
        let worker_pg = cluster.app_url_via(&link("worker->pg".into(), cluster.ports()).await?);
        let mut api_onceq = Vec::new();
        let mut worker_onceq = Vec::new();
        for (i, port) in server_ports.iter().enumerate() {
            api_onceq.push(link(format!("api->onceq{i}"), &[*port]).await?[0]);
            worker_onceq.push(link(format!("worker->onceq{i}"), &[*port]).await?[0]);
        }
        let onceq_url = |port: u16| format!("http://127.0.0.1:{port}");
        let common = |db: &str, onceq_port: u16| {
            vec![
                ("DATABASE_URL".to_owned(), db.to_owned()),
                ("ONCEQ_URL".to_owned(), onceq_url(onceq_port)),
                ("ONCEQ_API_KEY".to_owned(), crate::API_KEY.to_owned()),
            ]
        };

        let mut workers = Vec::new();
        for j in 0..config.workers {
            let slow = j < config.slow_workers;
            let mut env = common(&worker_pg, worker_onceq[j % config.servers]);
            let (work, visibility) = if slow {
                (config.slow_work_ms, config.slow_visibility_secs)
            } else {
                (config.work_ms, config.visibility_secs)
            };
            env.extend([
                (
                    "WORKER_CONCURRENCY".into(),
                    config.worker_concurrency.to_string(),
                ),
                ("WORKER_VISIBILITY_SECS".into(), visibility.to_string()),
                (
                    "WORKER_FACT_LEASE_SECS".into(),
                    config.fact_lease_secs.to_string(),
                ),
                ("EXPORTS_WORK_MS".into(), work.to_string()),
                // "job settled" lines: the worker's own count of outcomes.
                ("EXPORTS_LOG".into(), "info,onceq::worker=debug".into()),
            ]);
            if slow {
                env.push((
                    "WORKER_HEARTBEAT_MS".into(),
                    config.slow_heartbeat_ms.to_string(),
                ));
            }
            if config.broken == Some(Break::Facts) {
                env.push(("EXPORTS_UNSAFE_NAIVE_WORKER".into(), "true".into()));
            }
            let name = format!("worker{j}");
            workers.push(supervise(Spec {
                log: log(&name),
                name,
                program: bins.app.program.clone(),
                args: bins.app.worker.clone(),
                env,
            }));
        }
        wait_for_table(&cluster.app_url, "exports").await?;

        let mut apis = Vec::new();
        let mut api_ports = Vec::new();
        for i in 0..config.apis {
            let port = procs::free_port()?;
            let mut env = common(&api_pg, api_onceq[i % config.servers]);
            env.extend([
                ("LISTEN".into(), format!("127.0.0.1:{port}")),
                (
                    "EXPORTS_LEASE_SECS".into(),
                    config.api_lease_secs.to_string(),
                ),
            ]);
            if config.broken == Some(Break::Ledger) {
                env.push(("EXPORTS_UNSAFE_SKIP_LEDGER".into(), "true".into()));
            }
            let name = format!("api{i}");
            apis.push(supervise(Spec {
                log: log(&name),
                name,
                program: bins.app.program.clone(),
                args: bins.app.api.clone(),
                env,
            }));
            api_ports.push(port);
        }
        for port in &api_ports {
            procs::wait_port(*port, STARTUP).await?;
        }
        Ok(Pipeline {
            servers,
            server_ports,
            apis,
            api_ports,
            workers,
            links,
        })
    }

    /// Every process, for the report.
    pub fn all(&self) -> impl Iterator<Item = &Arc<Proc>> {
        self.servers.iter().chain(&self.apis).chain(&self.workers)
    }
}

/// What the hostile tenant needs of the servers: its tarpit is on
/// 127.0.0.1, so push, webhooks and cron tasks may reach loopback.
fn hostile_args(config: &Config) -> Vec<String> {
    match config.hostile {
        Some(_) => vec!["--push-allow-loopback".into()],
        None => Vec::new(),
    }
}

/// Waits until `table` exists in the database at `url`.
async fn wait_for_table(url: &str, table: &str) -> anyhow::Result<()> {
    let deadline = tokio::time::Instant::now() + STARTUP;
    let db = cluster::connect(url, STARTUP).await?;
    loop {
        let row = db
            .query_one("SELECT to_regclass($1) IS NOT NULL", &[&table])
            .await?;
        if row.get::<_, bool>(0) {
            return Ok(());
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "no worker created `{table}` within {STARTUP:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
