//! [`Watched`]: a long-running program (etcd, Patroni, HAProxy) under the
//! same kind of `sh` watchdog as [`crate::TestCluster`]'s `postgres`, so
//! that it dies with the test process however that ends — a panic, a
//! `static` never dropped, a SIGKILL — and a test can still crash it on
//! purpose.
//!
//! The watchdog starts the program, writes its pid to `pid` in its
//! directory, and blocks reading one line from the test process:
//!
//! - `kill`: SIGKILL the program (and the postmaster named by
//!   `postmaster.pid` in `pgdata`, if any: a Patroni node crashes whole),
//!   leave the directory for a restart;
//! - `stop`: SIGTERM, wait (a clean shutdown; Patroni stops its postgres);
//! - end of file (the test process is gone, or the handle was dropped):
//!   SIGKILL both, then remove the directory.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::Mutex;

use crate::host::RunAs;

/// Arguments: log, dir, pgdata (or empty), then the program and its args.
const WATCHDOG: &str = r#"
log="$1"; dir="$2"; pgdata="$3"; shift 3
"$@" >>"$log" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$dir/pid"
postmaster() {
  [ -n "$pgdata" ] && [ -f "$pgdata/postmaster.pid" ] && head -n 1 "$pgdata/postmaster.pid"
}
read -r mode
case "$mode" in
  stop) kill -TERM "$pid"; wait "$pid" ;;
  *) pm="$(postmaster)"; kill -KILL "$pid"; [ -n "$pm" ] && kill -KILL "$pm"; wait "$pid" ;;
esac
case "$mode" in
  stop|kill) ;;
  *) rm -rf "$dir" ;;
esac
"#;

/// A program running under its watchdog; see the module doc.
#[derive(Debug)]
pub struct Watched {
    dir: PathBuf,
    pgdata: Option<PathBuf>,
    program: PathBuf,
    args: Vec<String>,
    run_as: RunAs,
    child: Mutex<Option<Child>>,
}

impl Watched {
    /// Starts `program args` as `run_as`, its output appended to `dir/log`.
    /// `pgdata`: the data directory of a postgres the program runs (and
    /// that a [`kill`](Self::kill) takes down with it).
    pub fn start(
        run_as: RunAs,
        dir: &Path,
        pgdata: Option<&Path>,
        program: &Path,
        args: Vec<String>,
    ) -> Watched {
        let watched = Watched {
            dir: dir.to_owned(),
            pgdata: pgdata.map(Path::to_owned),
            program: program.to_owned(),
            args,
            run_as,
            child: Mutex::new(None),
        };
        watched.spawn();
        watched
    }

    fn spawn(&self) {
        let _ = std::fs::remove_file(self.dir.join("pid"));
        let mut cmd = self.run_as.command(Path::new("sh"));
        cmd.arg("-c")
            .arg(WATCHDOG)
            .arg("onceq-testdb-watchdog")
            .arg(self.log_path())
            .arg(&self.dir)
            .arg(self.pgdata.as_deref().unwrap_or(Path::new("")))
            .arg(&self.program)
            .args(&self.args)
            .current_dir(&self.dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let child = cmd.spawn().unwrap_or_else(|e| {
            panic!(
                "onceq-testdb: spawn {} under its watchdog: {e}",
                self.program.display()
            )
        });
        *self.child.lock().expect("watched lock") = Some(child);
    }

    /// What the program has logged.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    fn log_path(&self) -> PathBuf {
        self.dir.join("log")
    }

    /// Whether it is running (not killed or stopped through this handle).
    pub fn is_up(&self) -> bool {
        self.child.lock().expect("watched lock").is_some()
    }

    /// SIGKILLs it (and its postgres), as a crash of its machine; waits
    /// until it is gone. A no-op when it is not running.
    pub async fn kill(&self) {
        self.tell(b"kill\n").await;
    }

    /// SIGTERM, and waits for it to exit. A no-op when not running.
    pub async fn stop(&self) {
        self.tell(b"stop\n").await;
    }

    /// Starts it again after [`kill`](Self::kill) or [`stop`](Self::stop).
    /// A no-op when running.
    pub fn restart(&self) {
        if !self.is_up() {
            self.spawn();
        }
    }

    /// Sends `SIGSTOP` (`-STOP`) or `SIGCONT` (`-CONT`) to the program only
    /// (not its postgres).
    pub fn signal(&self, signal: &str) {
        let pid = std::fs::read_to_string(self.dir.join("pid")).unwrap_or_default();
        let _ = std::process::Command::new("kill")
            .args([signal, pid.trim()])
            .status();
    }

    async fn tell(&self, line: &'static [u8]) {
        let Some(mut child) = self.child.lock().expect("watched lock").take() else {
            return;
        };
        if let Some(stdin) = child.stdin.as_mut() {
            let _ = stdin.write_all(line).and_then(|()| stdin.flush());
        }
        let _ = tokio::task::spawn_blocking(move || child.wait()).await;
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.lock().expect("watched lock").take() {
            drop(child.stdin.take());
            let _ = child.wait();
        }
    }
}
