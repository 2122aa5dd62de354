//! The consensus store Patroni keeps its leader lock in: one etcd member, or
//! three (a quorum to lose), each under a [`Watched`] watchdog.

use std::path::Path;
use std::time::{Duration, Instant};

use super::http;
use super::watched::Watched;
use crate::cluster::setup::free_port;
use crate::host::RunAs;

/// One etcd member.
#[derive(Debug)]
pub struct EtcdMember {
    /// Its client port (Patroni and etcdctl talk to it).
    pub client_port: u16,
    process: Watched,
}

impl EtcdMember {
    /// What it has logged.
    pub fn log(&self) -> String {
        self.process.log()
    }

    /// SIGKILLs it; its data stays for [`restart`](Self::restart).
    pub async fn kill(&self) {
        self.process.kill().await;
    }

    /// Starts it again on its ports and data.
    pub fn restart(&self) {
        self.process.restart();
    }

    /// Whether this handle has it running.
    pub fn is_up(&self) -> bool {
        self.process.is_up()
    }
}

/// Starts `n` members (1 or 3) in subdirectories of `root` and waits until
/// the cluster answers `/health`.
pub(super) async fn start(run_as: RunAs, root: &Path, n: usize) -> Vec<EtcdMember> {
    let ports: Vec<(u16, u16)> = (0..n).map(|_| (free_port(), free_port())).collect();
    let initial: Vec<String> = ports
        .iter()
        .enumerate()
        .map(|(i, (_, peer))| format!("e{i}=http://127.0.0.1:{peer}"))
        .collect();
    let initial = initial.join(",");
    let members: Vec<EtcdMember> = ports
        .iter()
        .enumerate()
        .map(|(i, &(client, peer))| {
            let dir = root.join(format!("etcd{i}"));
            std::fs::create_dir_all(&dir).expect("create an etcd directory");
            run_as.give(&dir);
            let args = vec![
                format!("--name=e{i}"),
                format!("--data-dir={}", dir.join("data").display()),
                format!("--listen-client-urls=http://127.0.0.1:{client}"),
                format!("--advertise-client-urls=http://127.0.0.1:{client}"),
                format!("--listen-peer-urls=http://127.0.0.1:{peer}"),
                format!("--initial-advertise-peer-urls=http://127.0.0.1:{peer}"),
                format!("--initial-cluster={initial}"),
                "--initial-cluster-state=new".into(),
                "--initial-cluster-token=onceq-testdb".into(),
                // No metrics or pprof listeners; quiet logs.
                "--log-level=warn".into(),
            ];
            EtcdMember {
                client_port: client,
                process: Watched::start(run_as, &dir, None, Path::new("/usr/bin/etcd"), args),
            }
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    for m in &members {
        while !healthy(m.client_port).await {
            assert!(
                Instant::now() < deadline,
                "onceq-testdb: etcd did not become healthy within 30 s:\n{}",
                m.log()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    members
}

/// Whether the member on `port` says the cluster has a leader.
pub(super) async fn healthy(port: u16) -> bool {
    http::get(port, "/health")
        .await
        .is_some_and(|(status, body)| status == 200 && body.contains("true"))
}
