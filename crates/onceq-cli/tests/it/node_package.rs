//! The npm package `onceq` (clients/node): its own test suite, run by
//! node's test runner (`npm test`) against a real `onceq serve` on
//! PostgreSQL and a real application database, both from the suite's
//! throwaway cluster. What the Node tests get, by environment:
//!
//! - `ONCEQ_URL`, `ONCEQ_API_KEY`: the running server and its key;
//! - `DATABASE_URL`: an empty application database (the request ledger's
//!   and the job facts' home, and the tests' own tables);
//! - `ONCEQ_BIN`: the `onceq` binary, for tests that start servers of
//!   their own (the embedded store, a server killed mid-story);
//! - `ONCEQ_QUEUE_DATABASE_URL`: the server's own database, for a test
//!   that restarts the server on the same data.

use std::{path::PathBuf, process::Command};

use crate::process::ServerProcess;

pub fn package_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../clients/node")
}

/// `npm ci` from the committed lockfile when the dependencies in `dir` are
/// missing or were installed from another lockfile (scripts/ensure-deps
/// installs them too, and leaves the same mark: a copy of the lockfile).
pub fn ensure_node_modules(dir: &std::path::Path) {
    let lock = std::fs::read(dir.join("package-lock.json")).expect("a committed package-lock.json");
    let mark = dir.join("node_modules/.onceq-installed-lock");
    if std::fs::read(&mark).is_ok_and(|m| m == lock) {
        return;
    }
    let status = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(dir)
        .status()
        .expect("npm must be installed for the Node package's tests");
    assert!(status.success(), "npm ci in {} failed", dir.display());
    std::fs::write(&mark, lock).expect("mark the install");
}

/// Held by every test that builds the package (`npm test`, `npm pack`,
/// `npm run build`) or runs code from its `dist/`: a build rewrites `dist/`
/// under a running app otherwise.
pub static PACKAGE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Builds the package (`npm run build`: the SQL copied in, TypeScript
/// compiled to `dist/`), its dependencies installed first. Call it holding
/// [`PACKAGE`].
pub fn build_package() -> PathBuf {
    let dir = package_dir();
    ensure_node_modules(&dir);
    let out = Command::new("npm")
        .args(["run", "build", "--silent"])
        .current_dir(&dir)
        .output()
        .expect("npm must be installed for the Node package's tests");
    assert!(
        out.status.success(),
        "npm run build failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_node_package_passes_its_tests_against_a_real_server() {
    let _package = PACKAGE.lock().await;
    let dir = package_dir();
    ensure_node_modules(&dir);
    let queue_db = onceq_testdb::fresh_database().await;
    let app_db = onceq_testdb::fresh_database().await;
    let key = "node-package-test-key";
    let server = ServerProcess::on_postgres(&queue_db.url, key, &[]);

    let out = Command::new("npm")
        .args(["test", "--silent"])
        .current_dir(&dir)
        .env("ONCEQ_URL", &server.url)
        .env("ONCEQ_API_KEY", key)
        .env("DATABASE_URL", &app_db.url)
        .env("ONCEQ_QUEUE_DATABASE_URL", &queue_db.url)
        .env("ONCEQ_BIN", env!("CARGO_BIN_EXE_onceq"))
        .output()
        .expect("npm must be installed for the Node package's tests");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "the Node package's tests failed:\n{stdout}\n{stderr}"
    );
    // node's test runner closes with "# pass N" / "# fail 0"; a run that
    // found no test must not count as a pass.
    let passed: usize = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("# pass "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    assert!(passed > 0, "the Node package ran no test:\n{stdout}");
    assert!(stdout.lines().any(|l| l.trim() == "# fail 0"));
    let (clean, _) = server.terminate();
    assert!(clean);
}
