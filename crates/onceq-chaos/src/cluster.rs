//! The run's PostgreSQL: one throwaway cluster — or, when the schedule has
//! failovers, an HA pair — with a database for the queue servers and one
//! for the exports app, and direct connections for the sampler, the drain
//! and the checker (never through a proxy: they must see the truth).
//!
//! # The HA pair
//!
//! A primary and a streaming standby built from it by `pg_basebackup`,
//! named [`STANDBY_NAME`] and listed in the primary's
//! `synchronous_standby_names`; `synchronous_commit` is on (the default),
//! so a commit is acknowledged only once the standby has flushed it. The
//! two listen on two ports fixed for the whole run: a
//! [`failover`](Cluster::failover) SIGKILLs the primary, promotes the
//! standby, and builds a new standby from the new primary *on the dead
//! primary's port*. So every URL handed out at the start (both ports,
//! `target_session_attrs=read-write`) stays right after any number of
//! failovers, and the processes find the new primary by themselves, as
//! they would behind a real orchestrator.
//!
//! # A Patroni cluster (`--patroni`)
//!
//! Three nodes under Patroni in strict synchronous mode, on three etcd
//! members (`onceq_testdb::patroni`), every process finding the leader
//! through every node's address. A [`failover`](Cluster::failover) then
//! SIGKILLs the leader node (Patroni and its PostgreSQL) and lets Patroni
//! promote a synchronous standby with no help; after the pause the node is
//! started again and rejoins (rewound if it must be).
//! [`kill_etcd`](Cluster::kill_etcd) SIGKILLs one etcd member: two of three
//! keep the quorum.

use std::time::Duration;

use onceq_testdb::patroni::{PatroniCluster, PatroniOptions};
use onceq_testdb::{ClusterOptions, StopMode, TestCluster};
use tokio::sync::Mutex;

/// The standby's `cluster_name`, which the primary's
/// `synchronous_standby_names` lists. One name for every standby of the
/// run: whichever node is primary waits for whichever is standby.
pub const STANDBY_NAME: &str = "chaos_standby";

/// How long a failover may take to get a new synchronous standby attached.
const SYNC_WITHIN: Duration = Duration::from_secs(60);

/// The primary and, in an HA pair, its synchronous standby; or a Patroni
/// cluster. (One per run, behind a mutex, never moved: the pair's size
/// does not matter.)
#[allow(clippy::large_enum_variant)]
enum Nodes {
    Pair {
        primary: TestCluster,
        standby: Option<TestCluster>,
    },
    Patroni(Box<PatroniCluster>),
}

/// The cluster (or HA pair) and its two databases.
pub struct Cluster {
    /// Behind an async mutex held for the whole of a fault: PostgreSQL
    /// faults (restarts, failovers) take turns, and a restart never meets
    /// a half-finished failover.
    nodes: Mutex<Nodes>,
    /// The fixed ports: the primary's first, then the standby's, if any.
    ports: Vec<u16>,
    /// The app's database name (ledger, job facts, exports).
    app_db: String,
    /// Direct URL of the queue database (every host).
    pub queue_url: String,
    /// Direct URL of the app database (every host).
    pub app_url: String,
}

/// Settings of every node. `wal_retrieve_retry_interval`: after a restart
/// of the primary the standby reconnects within 100 ms instead of the
/// default 5 s, during which every commit on the primary would wait.
fn options() -> ClusterOptions {
    ClusterOptions {
        settings: vec!["wal_retrieve_retry_interval=100ms".into()],
        ..ClusterOptions::default()
    }
}

impl Cluster {
    /// Starts PostgreSQL — with a synchronous standby when `ha` — and
    /// creates both databases.
    pub async fn start(ha: bool) -> Cluster {
        let primary = TestCluster::start_with_options(options()).await;
        let queue_db = primary.create_database().await.name;
        let app_db = primary.create_database().await.name;
        let standby = if ha {
            list_standby(&primary).await;
            let standby = TestCluster::start_standby(&primary, STANDBY_NAME, options()).await;
            wait_for_sync_standby(&primary).await;
            Some(standby)
        } else {
            None
        };
        let ports: Vec<u16> = std::iter::once(primary.port())
            .chain(standby.as_ref().map(TestCluster::port))
            .collect();
        Cluster {
            queue_url: url(&queue_db, &ports),
            app_url: url(&app_db, &ports),
            nodes: Mutex::new(Nodes::Pair { primary, standby }),
            ports,
            app_db,
        }
    }

    /// Starts a Patroni cluster (see the module doc) and creates both
    /// databases on its leader.
    pub async fn start_patroni() -> Cluster {
        let patroni = PatroniCluster::start(PatroniOptions {
            etcd_members: 3,
            ..PatroniOptions::default()
        })
        .await;
        let queue_db = patroni.create_database().await;
        let app_db = patroni.create_database().await;
        let ports: Vec<u16> = patroni.nodes.iter().map(|n| n.pg_port).collect();
        Cluster {
            queue_url: url(&queue_db, &ports),
            app_url: url(&app_db, &ports),
            nodes: Mutex::new(Nodes::Patroni(Box::new(patroni))),
            ports,
            app_db,
        }
    }

    /// The TCP ports PostgreSQL listens on: one, or the HA pair's two
    /// (which of them is the primary changes with every failover).
    pub fn ports(&self) -> &[u16] {
        &self.ports
    }

    /// The app database's URL with each host's port replaced by `ports[i]`
    /// (proxies in front of the hosts, in [`ports`](Self::ports)' order).
    pub fn app_url_via(&self, ports: &[u16]) -> String {
        url(&self.app_db, ports)
    }

    /// Stops the primary in `mode`, waits `pause`, starts it again. The
    /// standby, if any, reconnects by itself. False (nothing done) under
    /// Patroni, which would restart it itself.
    pub async fn restart(&self, mode: StopMode, pause: Duration) -> bool {
        let nodes = self.nodes.lock().await;
        let Nodes::Pair { primary, .. } = &*nodes else {
            return false;
        };
        primary.stop(mode).await;
        tokio::time::sleep(pause).await;
        primary.restart_server().await;
        true
    }

    /// SIGKILLs etcd member `which` (of three), waits `pause`, starts it
    /// again. False (nothing done) without Patroni.
    pub async fn kill_etcd(&self, pause: Duration, which: usize) -> bool {
        let nodes = self.nodes.lock().await;
        let Nodes::Patroni(patroni) = &*nodes else {
            return false;
        };
        let member = &patroni.etcd[which % patroni.etcd.len()];
        member.kill().await;
        tokio::time::sleep(pause).await;
        member.restart();
        true
    }

    /// The leader node SIGKILLed; Patroni promotes; after `pause` the node
    /// is started again; returns once the cluster is whole and synchronous.
    async fn patroni_failover(patroni: &PatroniCluster, pause: Duration) -> FailoverTimes {
        let within = Duration::from_secs(120);
        let old = patroni.wait_for_leader(None, within).await;
        patroni.nodes[old].kill().await;
        let killed = tokio::time::Instant::now();
        patroni.wait_for_leader(Some(old), within).await;
        let promoted = killed.elapsed();
        tokio::time::sleep(pause).await;
        patroni.wait_healthy().await;
        FailoverTimes {
            promoted,
            synchronous_again: killed.elapsed(),
        }
    }

    /// SIGKILLs the primary's postmaster, waits `pause` (an orchestrator
    /// noticing), promotes the standby, then builds a new synchronous
    /// standby from the new primary on the dead one's port and waits until
    /// it is synchronous, so that the next failover can happen. Returns how
    /// long that took, or `None` (having done nothing) without a standby.
    ///
    /// The new primary has `synchronous_standby_names` from the moment it is
    /// promoted (every standby inherits it, see `list_standby`), so its
    /// commits wait until the new standby is attached (a *strict*
    /// synchronous mode): no commit is ever acknowledged by one node alone.
    pub async fn failover(&self, pause: Duration) -> Option<FailoverTimes> {
        let mut nodes = self.nodes.lock().await;
        let (primary, standby) = match &mut *nodes {
            Nodes::Patroni(patroni) => return Some(Self::patroni_failover(patroni, pause).await),
            Nodes::Pair { primary, standby } => (primary, standby),
        };
        let standby = standby.take()?;
        primary.kill_postmaster();
        let killed = tokio::time::Instant::now();
        tokio::time::sleep(pause).await;
        standby.promote().await;
        let promoted = killed.elapsed();
        assert_inherited_sync_names(&standby).await;
        let dead = std::mem::replace(primary, standby);
        let port = dead.port();
        // Drop stops its watchdog and removes its directory: blocking work.
        let _ = tokio::task::spawn_blocking(move || drop(dead)).await;
        let fresh =
            TestCluster::start_standby_on_port(primary, STANDBY_NAME, port, options()).await;
        wait_for_sync_standby(primary).await;
        *standby_slot(&mut nodes) = Some(fresh);
        Some(FailoverTimes {
            promoted,
            synchronous_again: killed.elapsed(),
        })
    }
}

/// The standby's place in a pair.
fn standby_slot(nodes: &mut Nodes) -> &mut Option<TestCluster> {
    match nodes {
        Nodes::Pair { standby, .. } => standby,
        Nodes::Patroni(_) => unreachable!("a failover of a pair"),
    }
}

/// How long one failover took, from the SIGKILL of the primary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FailoverTimes {
    /// Until the standby was promoted (the pause, then `pg_promote`): the
    /// processes can connect to it for writing from here on.
    pub promoted: Duration,
    /// Until the new standby was synchronous. In between, commits on the new
    /// primary wait for it (strict mode), so this is the write outage.
    pub synchronous_again: Duration,
}

/// `postgres://postgres@127.0.0.1:P1[,127.0.0.1:P2]/db`, with
/// `target_session_attrs=read-write` (skip the standby) and a short connect
/// timeout (a dead host is given up quickly) when there are two hosts.
fn url(db: &str, ports: &[u16]) -> String {
    let hosts: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let mut url = format!("postgres://postgres@{}/{db}", hosts.join(","));
    if ports.len() > 1 {
        url.push_str("?target_session_attrs=read-write&connect_timeout=2");
    }
    url
}

/// Lists [`STANDBY_NAME`] in `primary`'s `synchronous_standby_names`
/// (`ALTER SYSTEM`, reloaded), once, before the first standby's base
/// backup. `ALTER SYSTEM` writes `postgresql.auto.conf`, which
/// `pg_basebackup` copies: every standby of the run inherits the setting
/// (ignored while it is a standby) and has it in force the moment it is
/// promoted, with no instant in which a lone new primary acknowledges
/// commits. (The CLI's failover test sets it after its backup on purpose:
/// it does not rebuild a standby, and a promoted node waiting for one
/// would hang. Here the failover builds one at once.) The base backup
/// itself commits nothing, so it does not wait on the missing standby.
async fn list_standby(primary: &TestCluster) {
    let admin = connect(&primary.admin_url(), SYNC_WITHIN)
        .await
        .unwrap_or_else(|e| panic!("onceq-chaos: {e}"));
    // Two statements, two queries: ALTER SYSTEM refuses the implicit
    // transaction of a multi-statement query.
    for sql in [
        format!("ALTER SYSTEM SET synchronous_standby_names = '{STANDBY_NAME}'"),
        "SELECT pg_reload_conf()".to_owned(),
    ] {
        admin
            .batch_execute(&sql)
            .await
            .unwrap_or_else(|e| panic!("onceq-chaos: {sql}: {e:?}"));
    }
}

/// Checks that a just-promoted node has [`STANDBY_NAME`] in force (inherited
/// through its base backup, see [`list_standby`]): without it, the new
/// primary would acknowledge commits alone and the run's "nothing
/// acknowledged is lost" would rest on luck.
async fn assert_inherited_sync_names(promoted: &TestCluster) {
    let admin = connect(&promoted.admin_url(), SYNC_WITHIN)
        .await
        .unwrap_or_else(|e| panic!("onceq-chaos: {e}"));
    let names: String = admin
        .query_one("SHOW synchronous_standby_names", &[])
        .await
        .unwrap_or_else(|e| panic!("onceq-chaos: SHOW synchronous_standby_names: {e:?}"))
        .get(0);
    assert_eq!(
        names, STANDBY_NAME,
        "onceq-chaos: the promoted standby did not inherit synchronous_standby_names"
    );
}

/// Waits until `primary` reports its standby `sync`.
async fn wait_for_sync_standby(primary: &TestCluster) {
    let deadline = tokio::time::Instant::now() + SYNC_WITHIN;
    let admin = connect(&primary.admin_url(), SYNC_WITHIN)
        .await
        .unwrap_or_else(|e| panic!("onceq-chaos: {e}"));
    loop {
        let sync = admin
            .query(
                "SELECT 1 FROM pg_stat_replication WHERE application_name = $1 AND sync_state = 'sync'",
                &[&STANDBY_NAME],
            )
            .await
            .map(|rows| !rows.is_empty())
            .unwrap_or(false);
        if sync {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "onceq-chaos: no synchronous standby within {SYNC_WITHIN:?}\n{}",
            primary.log()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A direct connection to `url`, retried until `within` has passed (the
/// cluster may be restarting or failing over).
pub async fn connect(url: &str, within: Duration) -> anyhow::Result<tokio_postgres::Client> {
    let deadline = tokio::time::Instant::now() + within;
    let pg = onceq_pg::PgConnect::parse(url)?;
    loop {
        match pg.connect().await {
            Ok(client) => return Ok(client),
            Err(e) if tokio::time::Instant::now() >= deadline => {
                return Err(anyhow::anyhow!("connect to {url}: {e}"));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}
