//! The machine side: where PostgreSQL's binaries are and who runs them.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The directory holding `initdb` and `postgres`: `$ONCEQ_PG_BINDIR`, else
/// `pg_config --bindir`, else the newest `/usr/lib/postgresql/*/bin`.
///
/// Panics with a hint when none has `initdb`.
pub fn bindir() -> PathBuf {
    if let Some(dir) = std::env::var_os("ONCEQ_PG_BINDIR") {
        let dir = PathBuf::from(dir);
        assert!(
            has_server(&dir),
            "ONCEQ_PG_BINDIR={} has no initdb",
            dir.display()
        );
        return dir;
    }
    // pg_config may come from a client-only package, so check it too.
    if let Some(dir) = output("pg_config", &["--bindir"]).map(PathBuf::from)
        && has_server(&dir)
    {
        return dir;
    }
    newest_debian_bindir().unwrap_or_else(|| {
        panic!(
            "no PostgreSQL server binaries found: set ONCEQ_PG_BINDIR to the \
             directory holding initdb and postgres"
        )
    })
}

fn has_server(dir: &Path) -> bool {
    dir.join("initdb").is_file() && dir.join("postgres").is_file()
}

/// Debian/Ubuntu keep every major version side by side; pick the highest.
fn newest_debian_bindir() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let version = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = entry.path().join("bin");
            has_server(&bin).then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

/// Who runs `initdb` and `postgres`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunAs {
    /// The current (non-root) user, directly.
    Me,
    /// We are root: the `postgres` system user, through `runuser`.
    Postgres {
        /// Its uid, to chown the cluster directory.
        uid: u32,
        /// Its primary gid.
        gid: u32,
    },
}

impl RunAs {
    /// Decides from the effective uid (`id -u`; no `unsafe` `geteuid`).
    pub fn detect() -> RunAs {
        let euid = output("id", &["-u"]).and_then(|s| s.parse::<u32>().ok());
        if euid != Some(0) {
            return RunAs::Me;
        }
        let id = |flag| {
            output("id", &[flag, "postgres"])
                .and_then(|s| s.parse::<u32>().ok())
                .unwrap_or_else(|| {
                    panic!("running as root, but there is no `postgres` user to run initdb as")
                })
        };
        RunAs::Postgres {
            uid: id("-u"),
            gid: id("-g"),
        }
    }

    /// A command running `program` as this user.
    pub fn command(self, program: &Path) -> Command {
        match self {
            RunAs::Me => Command::new(program),
            RunAs::Postgres { .. } => {
                let mut cmd = Command::new("runuser");
                cmd.args(["-u", "postgres", "--"]).arg(program);
                cmd
            }
        }
    }

    /// Hands `path` to the user (root only; a no-op otherwise).
    pub fn give(self, path: &Path) {
        if let RunAs::Postgres { uid, gid } = self {
            std::os::unix::fs::chown(path, Some(uid), Some(gid))
                .unwrap_or_else(|e| panic!("chown {} to postgres: {e}", path.display()));
        }
    }
}

/// Trimmed stdout of a successful command, `None` on any failure.
fn output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}
