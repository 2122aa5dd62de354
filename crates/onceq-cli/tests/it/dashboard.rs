//! The dashboard in a real browser: `browser/dashboard.mjs` drives Debian's
//! Chromium (headless, through `playwright-core`, no browser download)
//! against a real `onceq serve`. The story is in the script; this test
//! starts the server, runs it, and checks the end state through the API.

use std::{path::PathBuf, process::Command};

use crate::process::ServerProcess;

fn browser_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../browser")
}

/// Chromium as `scripts/ensure-deps` installs it (or `$CHROMIUM`).
fn chromium() -> PathBuf {
    let path = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    assert!(
        path.exists(),
        "Chromium is not at {} (scripts/ensure-deps installs Debian's `chromium`)",
        path.display()
    );
    path
}

/// `playwright-core` in `browser/node_modules` (`npm ci` when absent).
fn ensure_playwright(dir: &std::path::Path) {
    if !dir.join("node_modules/playwright-core").exists() {
        let status = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(dir)
            .status()
            .expect("npm must be installed for the browser test");
        assert!(status.success(), "npm ci in browser/ failed");
    }
}

/// Starts `onceq serve` on a fresh embedded store with API key `key`, runs
/// the browser story `script` (in `browser/`) against it, and fails unless
/// the story exits 0 and prints `<name>: browser story passed`. Returns the
/// server (for the end-state checks) and the store's directory (kept alive
/// with it).
pub(crate) fn run_story(script: &str, key: &str) -> (ServerProcess, tempfile::TempDir) {
    let chromium = chromium();
    let dir = browser_dir();
    ensure_playwright(&dir);

    let data = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(
        &["--data-dir", data.path().to_str().unwrap()],
        &[("ONCEQ_API_KEY", key)],
    );
    let out = Command::new("node")
        .arg(script)
        .current_dir(&dir)
        .env("ONCEQ_BASE", &server.url)
        .env("ONCEQ_API_KEY", key)
        .env("CHROMIUM", &chromium)
        .output()
        .expect("node must be installed for the browser test");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "browser story failed:\n{stdout}\n{stderr}"
    );
    let name = script.trim_end_matches(".mjs");
    assert!(stdout.contains(&format!("{name}: browser story passed")));
    (server, data)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_redrives_a_dead_letter_in_a_browser() {
    let key = "dashboard-test-key";
    let (server, _data) = run_story("dashboard.mjs", key);

    // What the page did is what the store holds: the message is back.
    let stats: serde_json::Value = reqwest::Client::new()
        .get(format!("{}/v1/queue/stats/emails", server.url))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(stats["data"]["available"], 1, "{stats}");
    assert_eq!(stats["data"]["dead_lettered"], 0, "{stats}");
    let (clean, _) = server.terminate();
    assert!(clean);
}
