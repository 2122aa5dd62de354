//! Runs `onceq` as a child process.

use std::{
    io::{BufRead, BufReader},
    process::{Child, Command, Output, Stdio},
    sync::mpsc,
    time::Duration,
};

/// A running `onceq serve`.
pub struct ServerProcess {
    child: Child,
    pub url: String,
    /// What the server printed on stdout (the bootstrap key, if any).
    pub stdout_lines: mpsc::Receiver<String>,
    stderr_lines: mpsc::Receiver<String>,
    /// What it logged before it was listening.
    early_logs: Vec<String>,
    /// The data directory of [`on_postgres`](Self::on_postgres), kept as
    /// long as the process runs.
    _dir: Option<tempfile::TempDir>,
}

/// The `onceq` binary under test.
pub fn onceq() -> Command {
    Command::new(env!("CARGO_BIN_EXE_onceq"))
}

impl ServerProcess {
    /// Starts `onceq serve --listen 127.0.0.1:0 <args>` with `envs` and waits
    /// for its "listening" log line.
    pub fn start(args: &[&str], envs: &[(&str, &str)]) -> Self {
        Self::spawn_waiting(Self::command(args, envs))
    }

    /// The command [`start`](Self::start) runs, to change before
    /// [`spawn_waiting`](Self::spawn_waiting) runs it.
    pub fn command(args: &[&str], envs: &[(&str, &str)]) -> Command {
        let mut cmd = onceq();
        cmd.args(["serve", "--listen", "127.0.0.1:0"])
            .args(args)
            .env_remove("ONCEQ_API_KEY")
            .env_remove("DATABASE_URL")
            .env_remove("RUST_LOG")
            .env("ONCEQ_LOG", "info")
            .env("NO_COLOR", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in envs {
            cmd.env(k, v);
        }
        cmd
    }

    /// Spawns `cmd` (an `onceq serve` however launched) and waits for its
    /// "listening" log line, in text or JSON.
    pub fn spawn_waiting(mut cmd: Command) -> Self {
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn onceq serve");
        let stdout_lines = lines(child.stdout.take().unwrap());
        let stderr_lines = lines(child.stderr.take().unwrap());
        let mut seen = Vec::new();
        let url = loop {
            match stderr_lines.recv_timeout(Duration::from_secs(60)) {
                Ok(line) => {
                    if let Some(rest) = line.split("listening on ").nth(1) {
                        let url = rest.split([' ', '"']).next().unwrap().to_owned();
                        seen.push(line);
                        break url;
                    }
                    seen.push(line);
                }
                Err(_) => panic!("onceq serve did not start; it said:\n{}", seen.join("\n")),
            }
        };
        Self {
            child,
            url,
            stdout_lines,
            stderr_lines,
            early_logs: seen,
            _dir: None,
        }
    }

    /// `onceq serve` on the PostgreSQL database at `url`, accepting `key`,
    /// with `args` besides; its data directory (unused by the PostgreSQL
    /// store) is a temporary one.
    pub fn on_postgres(url: &str, key: &str, args: &[&str]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut all = vec![
            "--database-url",
            url,
            "--data-dir",
            dir.path().to_str().unwrap(),
        ];
        all.extend_from_slice(args);
        let mut server = Self::start(&all, &[("ONCEQ_API_KEY", key)]);
        server._dir = Some(dir);
        server
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGTERM and waits; returns whether it exited successfully and
    /// everything it logged.
    pub fn terminate(mut self) -> (bool, Vec<String>) {
        let pid = self.child.id().to_string();
        let status = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(status.success());
        let exit = self.child.wait().unwrap();
        let mut logs = std::mem::take(&mut self.early_logs);
        // The reader thread sees the end of the stream once the process
        // has exited: read to it, not only what has arrived so far.
        logs.extend(self.stderr_lines.iter());
        (exit.success(), logs)
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn lines(stream: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// `onceq <args>` with `envs` and nothing inherited that could point it
/// elsewhere.
pub fn command(args: &[&str], envs: &[(&str, &str)]) -> Command {
    let mut cmd = onceq();
    cmd.args(args)
        .env_remove("ONCEQ_API_KEY")
        .env_remove("DATABASE_URL");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd
}

/// Runs `onceq <args>` against a server and returns its output. Its
/// stdin, stdout and stderr are not terminals.
pub fn run(args: &[&str], envs: &[(&str, &str)]) -> Output {
    command(args, envs).output().unwrap()
}

/// Runs `onceq <args>` with `input` on its stdin.
pub fn run_with_stdin(args: &[&str], envs: &[(&str, &str)], input: &str) -> Output {
    use std::io::Write;
    let mut child = command(args, envs)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// A running `onceq <args>` whose stdout is read line by line.
pub struct Running {
    child: Child,
    pub stdout_lines: mpsc::Receiver<String>,
}

impl Running {
    pub fn spawn(args: &[&str], envs: &[(&str, &str)]) -> Self {
        let mut child = command(args, envs)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout_lines = lines(child.stdout.take().unwrap());
        Self {
            child,
            stdout_lines,
        }
    }

    /// The next line it prints, waiting up to 30 s.
    #[track_caller]
    pub fn next_line(&self) -> String {
        self.stdout_lines
            .recv_timeout(Duration::from_secs(30))
            .expect("a line within 30 s")
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs and asserts success; returns stdout.
#[track_caller]
pub fn run_ok(args: &[&str], envs: &[(&str, &str)]) -> String {
    let out = run(args, envs);
    assert!(
        out.status.success(),
        "onceq {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}
