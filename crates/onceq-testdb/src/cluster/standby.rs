//! A streaming standby of a cluster, and its promotion (failover tests).

use super::setup::{free_port, make_cluster_dir, run_tool};
use super::{ClusterOptions, TestCluster};
use crate::host::{self, RunAs};

impl TestCluster {
    /// Starts a streaming standby of `primary` (which must allow
    /// replication connections from 127.0.0.1, as initdb's default
    /// `pg_hba.conf` does): `pg_basebackup -R` of it, served with
    /// `options`' settings and `cluster_name = name`, the name a primary's
    /// `synchronous_standby_names` lists.
    pub async fn start_standby(
        primary: &TestCluster,
        name: &str,
        options: ClusterOptions,
    ) -> TestCluster {
        Self::start_standby_on_port(primary, name, free_port(), options).await
    }

    /// [`start_standby`](Self::start_standby) on a given port, e.g. the one
    /// a dead primary served on: a harness that replaces the failed node
    /// keeps its clients' multi-host URLs unchanged across failovers. The
    /// port may still be held for a moment by the dead server's last
    /// processes, so binding is retried for a few seconds before giving up.
    pub async fn start_standby_on_port(
        primary: &TestCluster,
        name: &str,
        port: u16,
        mut options: ClusterOptions,
    ) -> TestCluster {
        let bindir = host::bindir();
        let run_as = RunAs::detect();
        let dir = make_cluster_dir(run_as);
        let mut cmd = run_as.command(&bindir.join("pg_basebackup"));
        cmd.args([
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-X",
            "stream",
            "-R",
            "--checkpoint=fast",
            "--no-sync",
        ])
        .arg("-p")
        .arg(primary.port.to_string())
        .arg("-D")
        .arg(dir.path().join("data"))
        .current_dir(dir.path());
        run_tool(cmd, "pg_basebackup").await;
        options.settings.push(format!("cluster_name={name}"));
        Self::launch(dir, options, Some(port)).await
    }

    /// Promotes a standby (`pg_promote()`, waiting for it) so it accepts
    /// writes.
    pub async fn promote(&self) {
        let client = self
            .admin_client()
            .await
            .unwrap_or_else(|e| panic!("onceq-testdb: connect to the standby: {e}"));
        let promoted: bool = client
            .query_one("SELECT pg_promote(true, 60)", &[])
            .await
            .unwrap_or_else(|e| panic!("onceq-testdb: pg_promote: {e}"))
            .get(0);
        assert!(
            promoted,
            "onceq-testdb: the standby was not promoted within 60 s"
        );
    }
}
