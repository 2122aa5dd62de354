//! A streaming standby of a cluster, and its promotion (failover tests).

use std::sync::Mutex;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use super::setup::{free_port, make_cluster_dir, write_setup};
use super::{ClusterOptions, PortTaken, StopMode, TestCluster};
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
        let out = tokio::task::spawn_blocking(move || cmd.output())
            .await
            .expect("join pg_basebackup")
            .unwrap_or_else(|e| panic!("onceq-testdb: run pg_basebackup: {e}"));
        assert!(
            out.status.success(),
            "onceq-testdb: pg_basebackup failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        options.settings.push(format!("cluster_name={name}"));
        write_setup(run_as, &dir.path().join("data"), &options);
        let cluster = TestCluster {
            dir,
            bindir,
            run_as,
            options,
            port,
            server: Mutex::new(None),
            databases: AtomicU64::new(0),
        };
        for _ in 0..20 {
            match cluster.spawn_and_wait().await {
                Ok(()) => return cluster,
                Err(PortTaken) => {
                    cluster.stop(StopMode::Immediate).await;
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
            }
        }
        panic!(
            "onceq-testdb: the standby's port {port} stayed taken\n{}",
            cluster.log()
        );
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
