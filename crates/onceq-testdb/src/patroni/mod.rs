//! [`PatroniCluster`]: three PostgreSQL nodes under Patroni, on etcd, behind
//! HAProxy — automatic failover as production teams run it, started by the
//! test itself as a non-root user on free loopback ports, from Debian's
//! `patroni`, `etcd-server` and `haproxy` (`scripts/ensure-deps`).
//!
//! - [`watched`]: every process (etcd, Patroni, HAProxy) under a watchdog
//!   that kills it when the test process goes, however it goes.
//! - [`etcd`]: one member, or three (a quorum to lose).
//! - [`gate`]: the TCP proxy between each node and etcd, which a test closes
//!   to cut the node off from the leader lock while clients still reach it.
//! - [`node`]: a node's `patroni.yml` (synchronous mode, strict if asked,
//!   `maximum_lag_on_failover: 0`) and its REST API.
//! - [`haproxy`]: HAProxy on Patroni's own template (`/primary` checks,
//!   `inter 3s fall 3 rise 2`).
//! - [`http`]: the two-line HTTP GET the health checks need.
//!
//! Two ways in, as an operator has: [`PatroniCluster::multi_host_url`]
//! (every node, `target_session_attrs=read-write`) and
//! [`PatroniCluster::haproxy_url`].
//!
//! [`shared_patroni`] is the test process's one cluster, lent to one test
//! at a time (tests crash its nodes) and handed over healthy. Its tests
//! are onceq's: `crates/onceq-cli/tests/it/patroni` (a leader killed, a
//! switchover, a leader cut off) and the chaos run's `--patroni`.

pub mod etcd;
pub mod gate;
pub mod haproxy;
pub mod http;
pub mod node;
pub mod watched;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::cluster::setup::{free_port, make_cluster_dir};
use crate::host::{self, RunAs};
pub use etcd::EtcdMember;
pub use gate::Gate;
pub use haproxy::Haproxy;
pub use node::PatroniNode;

/// How long a cluster may take to elect a leader and attach its standbys.
const HEALTHY_WITHIN: Duration = Duration::from_secs(90);

/// How a [`PatroniCluster`] is set up.
#[derive(Debug, Clone)]
pub struct PatroniOptions {
    /// etcd members: 1, or 3 for a quorum that can be lost.
    pub etcd_members: usize,
    /// `synchronous_mode_strict`: with no synchronous standby left, commits
    /// wait rather than the leader going on alone.
    pub strict: bool,
    /// Patroni's `ttl`, seconds: how long a leader lock outlives its
    /// holder (so, roughly, how long an automatic failover takes).
    pub ttl: u32,
}

impl Default for PatroniOptions {
    fn default() -> Self {
        PatroniOptions {
            etcd_members: 1,
            strict: true,
            ttl: 8,
        }
    }
}

/// etcd, three Patroni nodes and HAProxy; see the module doc. Dropping it
/// kills every process and removes the directory.
#[derive(Debug)]
pub struct PatroniCluster {
    /// The etcd members.
    pub etcd: Vec<EtcdMember>,
    /// The nodes, `n0`, `n1`, `n2`.
    pub nodes: Vec<PatroniNode>,
    /// HAProxy, routing to the leader.
    pub haproxy: Haproxy,
    scope: String,
    databases: AtomicU64,
    // Last: the processes' watchdogs go first, then the directory.
    dir: tempfile::TempDir,
}

impl PatroniCluster {
    /// Starts the cluster and waits until it has a leader with a
    /// synchronous standby, and HAProxy routes to the leader.
    pub async fn start(options: PatroniOptions) -> PatroniCluster {
        for bin in ["/usr/bin/etcd", "/usr/bin/patroni", "/usr/sbin/haproxy"] {
            assert!(
                std::path::Path::new(bin).is_file(),
                "onceq-testdb: {bin} is missing: install Debian's patroni, etcd-server and \
                 haproxy (scripts/ensure-deps does)"
            );
        }
        let run_as = RunAs::detect();
        let dir = make_cluster_dir(run_as);
        let etcd = etcd::start(run_as, dir.path(), options.etcd_members).await;
        let scope = format!("onceq-{}", std::process::id());
        let shared = node::Shared {
            scope: scope.clone(),
            strict: options.strict,
            ttl: options.ttl,
            loop_wait: 1,
            // loop_wait + 2 × retry_timeout ≤ ttl (see node.rs).
            retry_timeout: (options.ttl - 1) / 2,
            bindir: host::bindir(),
        };
        let nodes: Vec<PatroniNode> = (0..3)
            .map(|i| {
                let gates = etcd.iter().map(|m| Gate::start(m.client_port)).collect();
                PatroniNode::start(
                    run_as,
                    &dir.path().join(format!("n{i}")),
                    &format!("n{i}"),
                    (free_port(), free_port()),
                    gates,
                    &shared,
                )
            })
            .collect();
        let haproxy = Haproxy::start(run_as, &dir.path().join("haproxy"), &nodes).await;
        let cluster = PatroniCluster {
            etcd,
            nodes,
            haproxy,
            scope,
            databases: AtomicU64::new(0),
            dir,
        };
        cluster.wait_healthy().await;
        cluster
    }

    /// The cluster's directory.
    pub fn dir(&self) -> &std::path::Path {
        self.dir.path()
    }

    /// The node whose REST API answers `/primary` now, if one does.
    pub async fn leader(&self) -> Option<usize> {
        for (i, n) in self.nodes.iter().enumerate() {
            if n.is_up() && n.is_primary().await {
                return Some(i);
            }
        }
        None
    }

    /// Waits for a leader other than `not`; its index.
    pub async fn wait_for_leader(&self, not: Option<usize>, within: Duration) -> usize {
        let deadline = Instant::now() + within;
        loop {
            if let Some(i) = self.leader().await
                && Some(i) != not
            {
                return i;
            }
            assert!(
                Instant::now() < deadline,
                "onceq-testdb: no new Patroni leader within {within:?}\n{}",
                self.logs()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until every node runs, one is the leader with the others
    /// streaming from it (one of them synchronously), and HAProxy reaches
    /// it. Restarts nodes and etcd members a test left down and opens any
    /// gate it left closed first.
    pub async fn wait_healthy(&self) {
        for m in &self.etcd {
            m.restart();
        }
        for n in &self.nodes {
            n.reconnect();
            n.restart();
        }
        let deadline = Instant::now() + HEALTHY_WITHIN;
        loop {
            if self.is_healthy().await {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "onceq-testdb: the Patroni cluster was not healthy within {HEALTHY_WITHIN:?}\n{}",
                self.logs()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    async fn is_healthy(&self) -> bool {
        let Some(leader) = self.leader().await else {
            return false;
        };
        let Ok(admin) = self.admin(leader).await else {
            return false;
        };
        let Ok(row) = admin
            .query_one(
                "SELECT count(*) FILTER (WHERE state = 'streaming'), \
                        count(*) FILTER (WHERE sync_state = 'sync') \
                 FROM pg_stat_replication",
                &[],
            )
            .await
        else {
            return false;
        };
        let (streaming, sync): (i64, i64) = (row.get(0), row.get(1));
        if streaming < 2 || sync < 1 {
            return false;
        }
        self.haproxy_only_reaches_a_primary().await
    }

    /// Whether new connections through HAProxy land on a primary only now
    /// (it lags a leader change by up to three checks, and balances over
    /// every node it has up, so a node not yet marked down gets every other
    /// connection): six in a row must.
    async fn haproxy_only_reaches_a_primary(&self) -> bool {
        for _ in 0..6 {
            if !self.haproxy_reaches_a_primary().await {
                return false;
            }
        }
        true
    }

    /// Whether a new connection through HAProxy lands on a primary.
    async fn haproxy_reaches_a_primary(&self) -> bool {
        let Ok(via) = self.connect(&self.haproxy_url("postgres")).await else {
            return false;
        };
        via.query_one("SELECT pg_is_in_recovery()", &[])
            .await
            .is_ok_and(|r| !r.get::<_, bool>(0))
    }

    /// Waits until HAProxy routes new connections to a primary only.
    pub async fn wait_for_haproxy(&self, within: Duration) {
        let deadline = Instant::now() + within;
        while !self.haproxy_only_reaches_a_primary().await {
            assert!(
                Instant::now() < deadline,
                "onceq-testdb: HAProxy did not route to a primary within {within:?}\n{}",
                self.logs()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// A direct connection to node `i`'s `postgres` database.
    pub async fn admin(&self, i: usize) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
        self.connect(&self.node_url(i, "postgres")).await
    }

    async fn connect(&self, url: &str) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
        let mut config: tokio_postgres::Config = url.parse()?;
        config.connect_timeout(Duration::from_secs(2));
        let (client, connection) = config.connect(tokio_postgres::NoTls).await?;
        tokio::spawn(connection);
        Ok(client)
    }

    /// Creates an empty database with a name unique in this cluster, on
    /// the leader (the standbys replicate it); its name.
    pub async fn create_database(&self) -> String {
        let n = self.databases.fetch_add(1, Ordering::Relaxed);
        let name = format!("onceq_patroni_{n}");
        let leader = self.wait_for_leader(None, HEALTHY_WITHIN).await;
        let admin = self
            .admin(leader)
            .await
            .unwrap_or_else(|e| panic!("onceq-testdb: connect to the leader: {e}"));
        admin
            .batch_execute(&format!("CREATE DATABASE \"{name}\""))
            .await
            .unwrap_or_else(|e| panic!("onceq-testdb: CREATE DATABASE {name}: {e}"));
        name
    }

    /// Every node, the client finding the writable one:
    /// `postgres://postgres@127.0.0.1:P0,127.0.0.1:P1,127.0.0.1:P2/DB?target_session_attrs=read-write&connect_timeout=2`.
    pub fn multi_host_url(&self, database: &str) -> String {
        let hosts: Vec<String> = self
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.pg_port))
            .collect();
        format!(
            "postgres://postgres@{}/{database}?target_session_attrs=read-write&connect_timeout=2",
            hosts.join(",")
        )
    }

    /// Through HAProxy: `postgres://postgres@127.0.0.1:HAPROXY/DB`.
    pub fn haproxy_url(&self, database: &str) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{}/{database}",
            self.haproxy.port
        )
    }

    /// Node `i` alone, whatever its role.
    pub fn node_url(&self, i: usize, database: &str) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{}/{database}",
            self.nodes[i].pg_port
        )
    }

    /// A planned switchover (`patronictl switchover`) from the current
    /// leader to `candidate` (any synchronous standby when `None`); returns
    /// once `patronictl` has, i.e. once the new leader is promoted.
    pub async fn switchover(&self, candidate: Option<usize>) {
        let leader = self.wait_for_leader(None, HEALTHY_WITHIN).await;
        let mut cmd = std::process::Command::new("/usr/bin/patronictl");
        cmd.arg("-c")
            .arg(self.nodes[leader].config_path())
            .args(["switchover", "--force", "--leader"])
            .arg(&self.nodes[leader].name);
        if let Some(c) = candidate {
            cmd.arg("--candidate").arg(&self.nodes[c].name);
        }
        cmd.arg(&self.scope);
        let out = tokio::task::spawn_blocking(move || cmd.output())
            .await
            .expect("join patronictl")
            .unwrap_or_else(|e| panic!("onceq-testdb: run patronictl: {e}"));
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.status.success() && said.contains("Successfully switched over"),
            "onceq-testdb: patronictl switchover failed ({}):\n{said}\n{}",
            out.status,
            self.logs()
        );
    }

    /// Every process's log, for a failing test's message.
    pub fn logs(&self) -> String {
        let mut all = String::new();
        for n in &self.nodes {
            let log = n.log();
            let tail: Vec<&str> = log.lines().rev().take(30).collect();
            all.push_str(&format!("--- patroni {} (last lines)\n", n.name));
            for line in tail.into_iter().rev() {
                all.push_str(line);
                all.push('\n');
            }
        }
        all.push_str(&format!("--- haproxy\n{}", self.haproxy.log()));
        all
    }
}

impl PatroniNode {
    /// Cuts the node off from etcd (closes its gates): it can no longer
    /// renew a leader lock, while clients and the other nodes still reach
    /// its PostgreSQL and REST API.
    pub fn cut_off(&self) {
        for g in &self.etcd_gates {
            g.close();
        }
    }

    /// Opens the node's way to etcd again.
    pub fn reconnect(&self) {
        for g in &self.etcd_gates {
            g.open();
        }
    }
}

static SHARED: tokio::sync::OnceCell<PatroniCluster> = tokio::sync::OnceCell::const_new();
static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The test process's Patroni cluster ([`PatroniOptions::default`]: one
/// etcd member, strict synchronous mode), started on first use and lent to
/// one test at a time: hold the guard for the whole test. Each borrower
/// gets it healthy, whatever the one before left down. Its processes die
/// with the test process (see [`watched`]).
pub async fn shared_patroni() -> (
    &'static PatroniCluster,
    tokio::sync::MutexGuard<'static, ()>,
) {
    let turn = TURN.lock().await;
    let cluster = SHARED
        .get_or_init(|| PatroniCluster::start(PatroniOptions::default()))
        .await;
    cluster.wait_healthy().await;
    (cluster, turn)
}
