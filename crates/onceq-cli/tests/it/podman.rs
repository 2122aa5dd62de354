//! A private podman for a test: its own storage root, run root and
//! containers.conf in a temporary directory, so tests share no state and
//! leave none. Set up for these machines: vfs storage, Debian's runc
//! (crun fails on rlimits here), cgroupfs, no rlimits or pids limit, and
//! events in a file (there is no systemd).

use std::{
    io::{BufRead, BufReader},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::mpsc,
    time::Duration,
};

pub struct Podman {
    dir: tempfile::TempDir,
}

const CONF: &str = r#"[containers]
default_ulimits = []
pids_limit = 0

[engine]
events_logger = "file"
cgroup_manager = "cgroupfs"
runtime = "runc"
"#;

impl Podman {
    pub fn new() -> Self {
        // Rootless podman maps users differently (the test reads the
        // server's uid from the host); scripts/test runs as root.
        assert!(
            std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").unwrap()) == 0,
            "the container test runs podman as root: run it as root (scripts/test, CI)"
        );
        let dir = tempfile::Builder::new()
            .prefix("onceq-podman")
            .tempdir()
            .unwrap();
        std::fs::write(dir.path().join("containers.conf"), CONF).unwrap();
        Self { dir }
    }

    /// The podman command line with this instance's storage, as words.
    pub fn words(&self) -> Vec<String> {
        let at = |name: &str| self.dir.path().join(name).display().to_string();
        [
            "podman".to_owned(),
            "--root".into(),
            at("root"),
            "--runroot".into(),
            at("run"),
            "--tmpdir".into(),
            at("tmp"),
            "--storage-driver".into(),
            "vfs".into(),
            "--runtime".into(),
            "runc".into(),
            "--cgroup-manager".into(),
            "cgroupfs".into(),
        ]
        .into()
    }

    pub fn conf(&self) -> PathBuf {
        self.dir.path().join("containers.conf")
    }

    /// `podman <args>` on this instance.
    pub fn command(&self, args: &[&str]) -> Command {
        let words = self.words();
        let mut cmd = Command::new(&words[0]);
        cmd.args(&words[1..])
            .args(args)
            .env("CONTAINERS_CONF", self.conf());
        cmd
    }

    /// Runs `podman <args>`, asserts success and returns its stdout.
    #[track_caller]
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.command(args).output().unwrap();
        assert!(
            out.status.success(),
            "podman {args:?} failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    /// Builds the image `tag` from the binary under test with
    /// scripts/build-image (as a user would, BIN= instead of a release
    /// build).
    pub fn build_image(&self, tag: &str) {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/build-image");
        let out = Command::new(script)
            .env("BIN", env!("CARGO_BIN_EXE_onceq"))
            .env("TAG", tag)
            .env("PODMAN", self.words().join(" "))
            .env("CONTAINERS_CONF", self.conf())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "scripts/build-image failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Follows a container's log from its start until a line containing
    /// `needle`, and returns the lines up to it.
    #[track_caller]
    pub fn wait_for_log(&self, container: &str, needle: &str) -> Vec<String> {
        let follow = LogFollower::start(self.command(&["logs", "--follow", container]));
        let mut seen = Vec::new();
        loop {
            match follow.lines.recv_timeout(Duration::from_secs(60)) {
                Ok(line) => {
                    let done = line.contains(needle);
                    seen.push(line);
                    if done {
                        return seen;
                    }
                }
                Err(_) => panic!(
                    "{container} never logged {needle:?}; it said:\n{}",
                    seen.join("\n")
                ),
            }
        }
    }
}

impl Drop for Podman {
    fn drop(&mut self) {
        // Containers first (their processes), then the files go with the
        // temporary directory.
        let _ = self
            .command(&["rm", "--all", "--force", "--time", "0"])
            .output();
        let _ = self.command(&["system", "reset", "--force"]).output();
    }
}

/// `podman logs --follow`, its stdout and stderr merged into lines.
struct LogFollower {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl LogFollower {
    fn start(mut cmd: Command) -> Self {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, lines) = mpsc::channel();
        for stream in [
            Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().unwrap()),
        ] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        Self { child, lines }
    }
}

impl Drop for LogFollower {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
