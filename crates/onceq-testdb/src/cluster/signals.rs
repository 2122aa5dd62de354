//! Signals to a cluster's processes: a crash of the primary (SIGKILL), a
//! stall (SIGSTOP) and its end (SIGCONT).

use super::TestCluster;

impl TestCluster {
    /// SIGKILLs the postmaster, as a crash of the machine's database would
    /// look from outside (its backends exit as they notice). [`stop`](Self::stop)
    /// and drop still clean up after it.
    pub fn kill_postmaster(&self) {
        let pid = self.postmaster_pid();
        let status = std::process::Command::new("kill")
            .args(["-KILL", &pid])
            .status()
            .expect("run kill");
        assert!(status.success(), "onceq-testdb: kill -KILL {pid} failed");
    }

    /// Freezes every process of the cluster (SIGSTOP to the postmaster and
    /// its children): connections stay open, the kernel still acknowledges
    /// TCP, nothing answers — a stalled database. [`thaw`](Self::thaw)
    /// resumes it.
    pub fn freeze(&self) {
        self.signal_all("-STOP");
    }

    /// Resumes a [`freeze`](Self::freeze)d cluster.
    pub fn thaw(&self) {
        self.signal_all("-CONT");
    }

    /// The running postmaster's pid (the first line of `postmaster.pid`).
    fn postmaster_pid(&self) -> String {
        let pid_file = self.data_dir().join("postmaster.pid");
        let pid = std::fs::read_to_string(&pid_file)
            .unwrap_or_else(|e| panic!("onceq-testdb: read {}: {e}", pid_file.display()));
        pid.lines().next().unwrap_or_default().trim().to_owned()
    }

    fn signal_all(&self, signal: &str) {
        let pid = self.postmaster_pid();
        let children = std::process::Command::new("pgrep")
            .args(["-P", &pid])
            .output()
            .expect("run pgrep");
        let mut pids: Vec<String> = String::from_utf8_lossy(&children.stdout)
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        // The postmaster first on the way down (so it starts no new
        // backend), last on the way up.
        if signal == "-STOP" {
            pids.insert(0, pid);
        } else {
            pids.push(pid);
        }
        let status = std::process::Command::new("kill")
            .arg(signal)
            .args(&pids)
            .status()
            .expect("run kill");
        assert!(
            status.success(),
            "onceq-testdb: kill {signal} {pids:?} failed"
        );
    }
}
