//! [`PgBouncer`]: Debian's `pgbouncer` in transaction pooling mode in front
//! of a [`TestCluster`], as production often runs PostgreSQL.
//!
//! Like the cluster's `postgres`, it runs under a `sh` watchdog reading the
//! test process's pipe, so it dies with the test process even when it is
//! held in a `static`. As root it runs as `postgres` (pgbouncer refuses
//! root).

use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::TestCluster;
use crate::host::RunAs;

/// Reads one line (or end of file), then stops pgbouncer.
const WATCHDOG: &str = r#"
"$1" "$2" >>"$3" 2>&1 </dev/null &
pid=$!
read -r _
kill -INT "$pid"
wait "$pid"
"#;

/// A running pgbouncer. Dropping it stops it.
#[derive(Debug)]
pub struct PgBouncer {
    dir: tempfile::TempDir,
    port: u16,
    server: Mutex<Option<Child>>,
}

impl PgBouncer {
    /// Starts pgbouncer (`pool_mode = transaction`, trust auth, every
    /// database of `cluster`), with at most `server_connections` server
    /// connections per database, each closed after 2 s idle (a test
    /// process's many short-lived databases must not keep the cluster's
    /// connections), and waits until it accepts connections.
    pub async fn start(cluster: &TestCluster, server_connections: u32) -> PgBouncer {
        let binary = which("pgbouncer").unwrap_or_else(|| {
            panic!("onceq-testdb: no pgbouncer binary (scripts/ensure-deps installs Debian's pgbouncer)")
        });
        let run_as = RunAs::detect();
        let dir = tempfile::Builder::new()
            .prefix("pgbouncer-")
            .tempdir_in(std::env::temp_dir())
            .expect("onceq-testdb: pgbouncer directory");
        run_as.give(dir.path());
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
            l.local_addr().expect("its address").port()
        };
        let d = dir.path().display();
        let ini = format!(
            "[databases]\n\
             * = host=127.0.0.1 port={pg}\n\
             [pgbouncer]\n\
             listen_addr = 127.0.0.1\n\
             listen_port = {port}\n\
             unix_socket_dir =\n\
             auth_type = trust\n\
             auth_file = {d}/userlist.txt\n\
             pool_mode = transaction\n\
             default_pool_size = {server_connections}\n\
             server_idle_timeout = 2\n\
             max_client_conn = 1000\n\
             pidfile = {d}/pgbouncer.pid\n\
             admin_users = postgres\n\
             ignore_startup_parameters = extra_float_digits\n",
            pg = cluster.port(),
        );
        for (name, text) in [
            ("pgbouncer.ini", ini.as_str()),
            ("userlist.txt", "\"postgres\" \"\"\n"),
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, text).expect("onceq-testdb: write pgbouncer config");
            run_as.give(&path);
        }
        let log = dir.path().join("pgbouncer.log");
        std::fs::write(&log, "").expect("onceq-testdb: pgbouncer log");
        run_as.give(&log);
        let mut cmd = run_as.command(std::path::Path::new("sh"));
        cmd.arg("-c")
            .arg(WATCHDOG)
            .arg("onceq-testdb-pgbouncer")
            .arg(&binary)
            .arg(dir.path().join("pgbouncer.ini"))
            .arg(&log)
            .current_dir(dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("onceq-testdb: spawn pgbouncer: {e}"));
        let bouncer = PgBouncer {
            dir,
            port,
            server: Mutex::new(Some(child)),
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            assert!(
                Instant::now() < deadline,
                "onceq-testdb: pgbouncer did not listen within 30 s. Its log:\n{}",
                bouncer.log()
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        bouncer
    }

    /// Its port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `postgres://postgres@127.0.0.1:PORT/DATABASE`, through pgbouncer.
    pub fn url_of(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }

    /// What pgbouncer has logged.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("pgbouncer.log")).unwrap_or_default()
    }
}

impl Drop for PgBouncer {
    fn drop(&mut self) {
        let child = self.server.lock().map(|mut s| s.take()).unwrap_or(None);
        if let Some(mut child) = child {
            if let Some(stdin) = child.stdin.as_mut() {
                let _ = stdin.write_all(b"stop\n");
            }
            drop(child.stdin.take());
            let _ = child.wait();
        }
    }
}

fn which(program: &str) -> Option<PathBuf> {
    ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"]
        .iter()
        .map(|d| PathBuf::from(d).join(program))
        .find(|p| p.is_file())
}
