//! One PostgreSQL node under Patroni: its `patroni.yml`, its process, and
//! its REST API.

use std::path::{Path, PathBuf};

use super::gate::Gate;
use super::http;
use super::watched::Watched;
use crate::host::RunAs;

/// What every node of a cluster shares in its `patroni.yml`.
#[derive(Debug, Clone)]
pub(super) struct Shared {
    pub scope: String,
    pub strict: bool,
    pub ttl: u32,
    pub loop_wait: u32,
    pub retry_timeout: u32,
    pub bindir: PathBuf,
}

/// A Patroni node and the PostgreSQL it runs.
#[derive(Debug)]
pub struct PatroniNode {
    /// Its Patroni name (`n0`, `n1`, ...).
    pub name: String,
    /// PostgreSQL's port on 127.0.0.1.
    pub pg_port: u16,
    /// The REST API's port (`/primary`, `/replica`, `/health`).
    pub rest_port: u16,
    /// Its ways to etcd, one per member: close them
    /// ([`cut_off`](Self::cut_off)) to cut the node off from the leader lock.
    pub etcd_gates: Vec<Gate>,
    dir: PathBuf,
    process: Watched,
}

impl PatroniNode {
    /// Writes the node's configuration under `dir` and starts Patroni.
    pub(super) fn start(
        run_as: RunAs,
        dir: &Path,
        name: &str,
        ports: (u16, u16),
        etcd_gates: Vec<Gate>,
        shared: &Shared,
    ) -> PatroniNode {
        std::fs::create_dir_all(dir).expect("create a node directory");
        run_as.give(dir);
        let (pg_port, rest_port) = ports;
        let config = dir.join("patroni.yml");
        std::fs::write(
            &config,
            yaml(name, dir, pg_port, rest_port, &etcd_gates, shared),
        )
        .expect("write patroni.yml");
        run_as.give(&config);
        let process = Watched::start(
            run_as,
            dir,
            Some(&dir.join("data")),
            Path::new("/usr/bin/patroni"),
            vec![config.display().to_string()],
        );
        PatroniNode {
            name: name.to_owned(),
            pg_port,
            rest_port,
            etcd_gates,
            dir: dir.to_owned(),
            process,
        }
    }

    /// The node's `patroni.yml`, for `patronictl -c`.
    pub fn config_path(&self) -> PathBuf {
        self.dir.join("patroni.yml")
    }

    /// Whether its REST API answers `/primary` with 200: Patroni holds the
    /// leader lock and its PostgreSQL accepts writes (what HAProxy checks).
    pub async fn is_primary(&self) -> bool {
        http::get(self.rest_port, "/primary")
            .await
            .is_some_and(|(status, _)| status == 200)
    }

    /// Whether its REST API answers `/replica` with 200: a running standby.
    pub async fn is_replica(&self) -> bool {
        http::get(self.rest_port, "/replica")
            .await
            .is_some_and(|(status, _)| status == 200)
    }

    /// Patroni's log (PostgreSQL's goes to `data/log/`).
    pub fn log(&self) -> String {
        self.process.log()
    }

    /// SIGKILLs Patroni and its postmaster at once: the node's machine
    /// crashed. [`restart`](Self::restart) brings it back (Patroni rejoins it
    /// as a standby, rewinding it if it must).
    pub async fn kill(&self) {
        self.process.kill().await;
    }

    /// Starts Patroni again after [`kill`](Self::kill).
    pub fn restart(&self) {
        self.process.restart();
    }

    /// Whether this handle has Patroni running.
    pub fn is_up(&self) -> bool {
        self.process.is_up()
    }

    /// Freezes (`-STOP`) or resumes (`-CONT`) Patroni alone; its PostgreSQL
    /// keeps running.
    pub fn signal_patroni(&self, signal: &str) {
        self.process.signal(signal);
    }
}

/// The node's configuration. Timings are short (a lost leader is replaced
/// within about `ttl` seconds) and keep Patroni's rule `loop_wait + 2 ×
/// retry_timeout ≤ ttl`: a leader that cannot renew its lock demotes
/// itself before the lock expires and another node can take it.
fn yaml(
    name: &str,
    dir: &Path,
    pg_port: u16,
    rest_port: u16,
    gates: &[Gate],
    s: &Shared,
) -> String {
    let dir = dir.display();
    let etcd: Vec<String> = gates
        .iter()
        .map(|g| format!("127.0.0.1:{}", g.port()))
        .collect();
    let etcd = etcd.join(",");
    let bindir = s.bindir.display();
    format!(
        r#"scope: {scope}
name: {name}
restapi:
  listen: 127.0.0.1:{rest_port}
  connect_address: 127.0.0.1:{rest_port}
etcd3:
  hosts: {etcd}
  # The hosts are this node's gates, not the members: do not discover
  # the members' own addresses (which would bypass the gates).
  use_proxies: true
bootstrap:
  dcs:
    ttl: {ttl}
    loop_wait: {loop_wait}
    retry_timeout: {retry}
    # Never promote a standby that is behind: with synchronous mode the
    # synchronous standby is never behind on acknowledged commits.
    maximum_lag_on_failover: 0
    synchronous_mode: true
    synchronous_mode_strict: {strict}
    postgresql:
      # A crashed leader rejoins by rewinding its divergent WAL, or by a
      # fresh copy when that fails.
      use_pg_rewind: true
      remove_data_directory_on_rewind_failure: true
      remove_data_directory_on_diverged_timelines: true
      use_slots: true
      parameters:
        wal_log_hints: 'on'
        max_connections: 200
        wal_keep_size: 128MB
        # Tests only: no machine crash to survive (see TestCluster::start).
        # full_page_writes stays on: pg_rewind needs it.
        fsync: 'off'
  initdb:
  - encoding: UTF8
  - locale: C
  - auth: trust
  pg_hba:
  - local all all trust
  - host replication all 127.0.0.1/32 trust
  - host all all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:{pg_port}
  connect_address: 127.0.0.1:{pg_port}
  data_dir: {dir}/data
  bin_dir: {bindir}
  pgpass: {dir}/pgpass
  authentication:
    replication:
      username: postgres
    superuser:
      username: postgres
  parameters:
    unix_socket_directories: {dir}
"#,
        scope = s.scope,
        ttl = s.ttl,
        loop_wait = s.loop_wait,
        retry = s.retry_timeout,
        strict = s.strict,
    )
}
