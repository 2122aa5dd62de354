//! Making a cluster's directory: where it lives, `initdb`, the files and
//! `pg_hba.conf` of [`ClusterOptions`], and a free port.

use std::path::Path;

use super::PARENT_DIR;
use crate::host::RunAs;

/// How a cluster is set up beyond the defaults (TLS, replication, durability).
#[derive(Debug, Clone, Default)]
pub struct ClusterOptions {
    /// PostgreSQL's default durability (`fsync` on), for benchmarks; off by
    /// default for speed.
    pub durable: bool,
    /// Extra `postgresql.conf` settings, `name=value`, passed as `-c`.
    pub settings: Vec<String>,
    /// `pg_hba.conf` lines for TCP connections, replacing the default
    /// (trust from anywhere); local socket connections stay trusted, as the
    /// helper's own admin connection needs.
    pub hba: Option<String>,
    /// Files written into the data directory before the first start,
    /// owned by the server's user with mode 0600 (certificates, keys).
    pub files: Vec<(String, Vec<u8>)>,
}

pub(crate) fn make_cluster_dir(run_as: RunAs) -> tempfile::TempDir {
    let parent = Path::new(PARENT_DIR);
    std::fs::create_dir_all(parent)
        .unwrap_or_else(|e| panic!("onceq-testdb: create {PARENT_DIR}: {e}"));
    // Sticky and world-writable like /tmp: every user's test processes share
    // the parent, and a watchdog running as `postgres` may remove its own
    // cluster directory. Failing is fine when someone else owns the parent.
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(parent, std::fs::Permissions::from_mode(0o1777));
    }
    let dir = tempfile::Builder::new()
        .prefix("cluster-")
        .tempdir_in(parent)
        .unwrap_or_else(|e| panic!("onceq-testdb: create a directory in {PARENT_DIR}: {e}"));
    run_as.give(dir.path());
    dir
}

pub(super) async fn init_data_dir(bindir: &Path, run_as: RunAs, dir: &Path) {
    let mut cmd = run_as.command(&bindir.join("initdb"));
    cmd.arg("-D")
        .arg(dir.join("data"))
        .args([
            "-U",
            "postgres",
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--locale=C",
            // Nothing here needs to survive a power cut of the machine.
            "--no-sync",
        ])
        .current_dir(dir);
    run_tool(cmd, "initdb").await;
}

/// Runs one of PostgreSQL's tools to its end; panics with its output when
/// it fails.
pub(super) async fn run_tool(mut cmd: std::process::Command, what: &'static str) {
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .unwrap_or_else(|e| panic!("onceq-testdb: join {what}: {e}"))
        .unwrap_or_else(|e| panic!("onceq-testdb: run {what}: {e}"));
    assert!(
        out.status.success(),
        "onceq-testdb: {what} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Writes `options`' files and `pg_hba.conf` into the data directory.
pub(super) fn write_setup(run_as: RunAs, data: &Path, options: &ClusterOptions) {
    use std::os::unix::fs::PermissionsExt;
    let mut files: Vec<(String, Vec<u8>)> = options.files.clone();
    if let Some(hba) = &options.hba {
        files.push((
            "pg_hba.conf".into(),
            format!("local all all trust\n{hba}\n").into_bytes(),
        ));
    }
    for (name, bytes) in files {
        let path = data.join(&name);
        std::fs::write(&path, bytes)
            .unwrap_or_else(|e| panic!("onceq-testdb: write {}: {e}", path.display()));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
            .unwrap_or_else(|e| panic!("onceq-testdb: chmod {}: {e}", path.display()));
        run_as.give(&path);
    }
}

pub(crate) use crate::ports::free_port;
