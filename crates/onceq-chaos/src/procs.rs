//! The supervisor: each child process runs under a task that starts it with
//! its env and log file, waits for it to exit (a crash, or our `kill -9`),
//! and starts it again after a pause — until the run stops.

use std::fs::OpenOptions;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use tokio::process::Command;
use tokio_util::sync::CancellationToken;

/// Inherited variables a child must not see: it gets ours or none.
const SCRUBBED: &[&str] = &[
    "DATABASE_URL",
    "ONCEQ_URL",
    "ONCEQ_API_KEY",
    "ONCEQ_LISTEN",
    "LISTEN",
    "EXPORTS_UNSAFE_SKIP_LEDGER",
    "EXPORTS_UNSAFE_NAIVE_WORKER",
    "http_proxy",
    "https_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "all_proxy",
];

/// What to run.
#[derive(Debug, Clone)]
pub struct Spec {
    /// A short name, e.g. `worker1`; also the log file's name.
    pub name: String,
    /// The binary.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its environment (on top of ours, minus `SCRUBBED`).
    pub env: Vec<(String, String)>,
    /// Where stdout and stderr go (appended across restarts).
    pub log: PathBuf,
}

/// A supervised process.
pub struct Proc {
    spec: Spec,
    /// The running child's pid, 0 while down.
    pid: AtomicU32,
    starts: AtomicU64,
    kills: AtomicU64,
}

impl Proc {
    /// Starts `spec` and keeps it running (restarting `pause` after each
    /// exit) until `stop` is cancelled, when the child is killed.
    pub fn supervise(spec: Spec, pause: Duration, stop: CancellationToken) -> Arc<Proc> {
        let proc = Arc::new(Proc {
            spec,
            pid: AtomicU32::new(0),
            starts: AtomicU64::new(0),
            kills: AtomicU64::new(0),
        });
        let me = proc.clone();
        tokio::spawn(async move {
            while !stop.is_cancelled() {
                match me.spawn() {
                    Ok(mut child) => {
                        me.pid.store(child.id().unwrap_or(0), Relaxed);
                        me.starts.fetch_add(1, Relaxed);
                        tokio::select! {
                            _ = child.wait() => {}
                            () = stop.cancelled() => {
                                let _ = child.start_kill();
                                let _ = child.wait().await;
                            }
                        }
                        me.pid.store(0, Relaxed);
                        me.note(&format!("exited (start #{})", me.starts.load(Relaxed)));
                    }
                    Err(e) => me.note(&format!("could not start: {e}")),
                }
                tokio::select! {
                    () = tokio::time::sleep(pause) => {}
                    () = stop.cancelled() => {}
                }
            }
        });
        proc
    }

    fn spawn(&self) -> std::io::Result<tokio::process::Child> {
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.spec.log)?;
        let mut cmd = Command::new(&self.spec.program);
        cmd.args(&self.spec.args)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .kill_on_drop(true);
        for k in SCRUBBED {
            cmd.env_remove(k);
        }
        cmd.env("NO_COLOR", "1");
        for (k, v) in &self.spec.env {
            cmd.env(k, v);
        }
        cmd.spawn()
    }

    /// Appends a supervisor line to the child's log.
    fn note(&self, what: &str) {
        use std::io::Write;
        if let Ok(mut f) = OpenOptions::new().append(true).open(&self.spec.log) {
            let _ = writeln!(f, "=== chaos supervisor: {} {what}", self.spec.name);
        }
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// SIGKILL with `kill -9 <pid>` (the supervisor restarts it after the
    /// pause). False when it was down already.
    pub async fn kill9(&self) -> bool {
        let pid = self.pid.load(Relaxed);
        if pid == 0 {
            return false;
        }
        self.note("gets kill -9 (fault)");
        let killed = Command::new("kill")
            .args(["-9", &pid.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .await
            .is_ok_and(|s| s.success());
        if killed {
            self.kills.fetch_add(1, Relaxed);
        }
        killed
    }

    /// Whether it is running now.
    pub fn is_up(&self) -> bool {
        self.pid.load(Relaxed) != 0
    }

    /// Times started (1 + restarts).
    pub fn starts(&self) -> u64 {
        self.starts.load(Relaxed)
    }

    /// Times killed by a fault.
    pub fn kills(&self) -> u64 {
        self.kills.load(Relaxed)
    }

    /// Its log file.
    pub fn log(&self) -> &std::path::Path {
        &self.spec.log
    }
}

/// Waits until something accepts connections on `127.0.0.1:port`.
pub async fn wait_port(port: u16, within: Duration) -> anyhow::Result<()> {
    let deadline = tokio::time::Instant::now() + within;
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "nothing listens on 127.0.0.1:{port} after {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(())
}

/// A port free right now on 127.0.0.1 (for a child to bind, and to bind
/// again after a restart).
pub fn free_port() -> anyhow::Result<u16> {
    Ok(onceq_testdb::ports::free_port())
}
