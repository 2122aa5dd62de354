//! HAProxy in front of the Patroni nodes, routing to whichever node's REST
//! API answers `/primary` — Patroni's own `haproxy.cfg` template, with its
//! timing: a check every 3 s, a node out after 3 failed checks and back
//! after 2 good ones, its sessions shut when it is marked down. So for up
//! to ~9 s after a switchover HAProxy still sends new connections to the
//! old leader, by then a read-only standby: what onceq must answer with a
//! retryable 503, not a 500.

use std::path::Path;
use std::time::{Duration, Instant};

use super::node::PatroniNode;
use super::watched::Watched;
use crate::cluster::setup::free_port;
use crate::host::RunAs;

/// A running HAProxy.
#[derive(Debug)]
pub struct Haproxy {
    /// The port clients connect to, on 127.0.0.1.
    pub port: u16,
    process: Watched,
}

impl Haproxy {
    /// Writes `haproxy.cfg` in `dir` for `nodes` and starts HAProxy in the
    /// foreground; waits until it listens.
    pub(super) async fn start(run_as: RunAs, dir: &Path, nodes: &[PatroniNode]) -> Haproxy {
        std::fs::create_dir_all(dir).expect("create the haproxy directory");
        run_as.give(dir);
        let port = free_port();
        let servers: String = nodes
            .iter()
            .map(|n| {
                format!(
                    "    server {} 127.0.0.1:{} maxconn 100 check port {}\n",
                    n.name, n.pg_port, n.rest_port
                )
            })
            .collect();
        let config = format!(
            "global\n    maxconn 300\n\
             defaults\n    mode tcp\n    retries 2\n    timeout client 30m\n    \
             timeout connect 4s\n    timeout server 30m\n    timeout check 5s\n\
             listen primary\n    bind 127.0.0.1:{port}\n    option httpchk OPTIONS /primary\n    \
             http-check expect status 200\n    \
             default-server inter 3s fall 3 rise 2 on-marked-down shutdown-sessions\n{servers}"
        );
        let path = dir.join("haproxy.cfg");
        std::fs::write(&path, config).expect("write haproxy.cfg");
        run_as.give(&path);
        let process = Watched::start(
            run_as,
            dir,
            None,
            Path::new("/usr/sbin/haproxy"),
            vec!["-db".into(), "-f".into(), path.display().to_string()],
        );
        let deadline = Instant::now() + Duration::from_secs(10);
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            assert!(
                Instant::now() < deadline,
                "onceq-testdb: haproxy did not listen within 10 s:\n{}",
                process.log()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Haproxy { port, process }
    }

    /// What HAProxy has logged (health-check transitions).
    pub fn log(&self) -> String {
        self.process.log()
    }
}
