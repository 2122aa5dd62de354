//! The binaries a run drives, and one run at a time.
//!
//! Why the test builds them itself: `env!("CARGO_BIN_EXE_…")` exists only
//! for this crate's own binaries, and a test run (`cargo test -p
//! onceq-chaos`, or `cargo test --workspace` before the other crates'
//! tests ran) does not promise that `onceq` and `exports` are built. So we
//! run `cargo build -p onceq-cli -p exports` once per test process, with
//! the same target directory and profile as this test binary — found from
//! `CARGO_BIN_EXE_chaos`, which lives in `<target-dir>/<profile>/`. Cargo
//! releases its build lock before it runs tests, so this nested build does
//! not wait on the outer one; when everything is up to date it is a no-op
//! of a second or two. `ONCEQ_BIN` and `EXPORTS_BIN` skip the build.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// `(onceq, exports)`.
pub fn binaries() -> &'static (PathBuf, PathBuf) {
    static BINS: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    BINS.get_or_init(|| {
        if let (Some(o), Some(e)) = (
            std::env::var_os("ONCEQ_BIN"),
            std::env::var_os("EXPORTS_BIN"),
        ) {
            return (o.into(), e.into());
        }
        let chaos = Path::new(env!("CARGO_BIN_EXE_chaos"));
        let profile_dir = chaos.parent().expect("chaos has a directory");
        let target_dir = profile_dir.parent().expect("the profile dir has a parent");
        let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") | None => "dev",
            Some(other) => other,
        };
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = Command::new(cargo)
            .args([
                "build",
                "--quiet",
                "-p",
                "onceq-cli",
                "-p",
                "exports",
                "--profile",
                profile,
            ])
            .env("CARGO_TARGET_DIR", target_dir)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("run cargo build");
        assert!(
            status.success(),
            "cargo build -p onceq-cli -p exports failed"
        );
        (profile_dir.join("onceq"), profile_dir.join("exports"))
    })
}

/// A config with the binaries filled in.
pub fn config(base: onceq_chaos::Config) -> onceq_chaos::Config {
    let (onceq, exports) = binaries();
    onceq_chaos::Config {
        onceq_bin: Some(onceq.clone()),
        exports_bin: Some(exports.clone()),
        ..base
    }
}

/// A config for the Node app (examples/exports-node) with the `onceq`
/// binary filled in; the app made ready first (see [`node_app`]).
pub fn node_config(base: onceq_chaos::Config) -> onceq_chaos::Config {
    onceq_chaos::Config {
        node_app_dir: Some(node_app().clone()),
        ..config(base).with_app(onceq_chaos::App::Node)
    }
}

/// examples/exports-node, ready to run: the package's and the app's npm
/// dependencies installed from their lockfiles (unless scripts/ensure-deps
/// did already) and the package built (`npm run build`), once per test
/// process.
pub fn node_app() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let package = root.join("clients/node");
        let app = root.join("examples/exports-node");
        npm_ci(&package);
        npm(&package, &["run", "build", "--silent"]);
        npm_ci(&app);
        app
    })
}

/// `npm ci` unless `node_modules` holds an install of this very lockfile
/// (the mark scripts/ensure-deps leaves: a copy of it).
fn npm_ci(dir: &Path) {
    let lock = std::fs::read(dir.join("package-lock.json")).expect("a committed lockfile");
    let mark = dir.join("node_modules/.onceq-installed-lock");
    if std::fs::read(&mark).is_ok_and(|m| m == lock) {
        return;
    }
    npm(dir, &["ci", "--no-audit", "--no-fund", "--loglevel=error"]);
    std::fs::write(&mark, lock).expect("mark the install");
}

fn npm(dir: &Path, args: &[&str]) {
    let status = Command::new("npm")
        .args(args)
        .current_dir(dir)
        .status()
        .expect("npm must be installed for the Node app's runs");
    assert!(status.success(), "npm {args:?} in {} failed", dir.display());
}

/// Held for the length of a run: one at a time (see `main.rs`).
pub static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
