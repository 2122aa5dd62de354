//! The seed's Express route and worker, verbatim but for their `BASE` line
//! and the route's port, run by Node.js against `onceq serve` on
//! PostgreSQL. The story itself is in `compat/seed-story.mjs`.

use std::{path::PathBuf, process::Command};

use crate::process::ServerProcess;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The seed's files: `$ONCEQ_SHARED_DIR/compat`, else `../shared/compat`
/// beside the repository.
fn seed_dir() -> PathBuf {
    let shared = std::env::var_os("ONCEQ_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("../shared"));
    let dir = shared.join("compat");
    assert!(
        dir.join("route.mjs").exists(),
        "the seed's compat files are not at {} (set ONCEQ_SHARED_DIR)",
        dir.display()
    );
    dir
}

/// Copies a seed file, pointing its BASE at `base` (and its port at
/// `port`), and checks nothing else changed.
fn rewrite(src: &str, base: &str, port: Option<u16>) -> String {
    const HOSTED: &str = r#"const BASE = "https://api.infrai.cc";"#;
    assert_eq!(
        src.matches(HOSTED).count(),
        1,
        "seed file lacks its BASE line"
    );
    let mut out = src.replace(HOSTED, &format!("const BASE = {base:?};"));
    if let Some(port) = port {
        const LISTEN: &str = "app.listen(3000,";
        assert_eq!(
            out.matches(LISTEN).count(),
            1,
            "route lacks its listen line"
        );
        out = out.replace(LISTEN, &format!("app.listen({port},"));
    }
    let changed = src.lines().zip(out.lines()).filter(|(a, b)| a != b).count();
    assert!(changed <= 2 && src.lines().count() == out.lines().count());
    out
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_seed_runs_unchanged_against_onceq_on_postgres() {
    let compat = repo_root().join("compat");
    if !compat.join("node_modules/express").exists() || !compat.join("node_modules/pg").exists() {
        let status = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund"])
            .current_dir(&compat)
            .status()
            .expect("npm must be installed for the compatibility test");
        assert!(status.success(), "npm install express pg failed");
    }

    let queue_db = onceq_testdb::fresh_database().await;
    let app_db = onceq_testdb::fresh_database().await;
    let key = "your_infrai_api_key";
    let server = ServerProcess::start(
        &["--database-url", &queue_db.url],
        &[("ONCEQ_API_KEY", key)],
    );

    let work = compat.join(".work");
    std::fs::create_dir_all(&work).unwrap();
    let seed = seed_dir();
    let port = free_port();
    let read = |name: &str| std::fs::read_to_string(seed.join(name)).unwrap();
    std::fs::write(
        work.join("route.mjs"),
        rewrite(&read("route.mjs"), &server.url, Some(port)),
    )
    .unwrap();
    std::fs::write(
        work.join("worker.mjs"),
        rewrite(&read("worker.mjs"), &server.url, None),
    )
    .unwrap();
    std::fs::write(work.join("schema.sql"), read("schema.sql")).unwrap();

    let out = Command::new("node")
        .arg("seed-story.mjs")
        .current_dir(&compat)
        .env("ONCEQ_BASE", &server.url)
        .env("INFRAI_API_KEY", key)
        .env("DATABASE_URL", &app_db.url)
        .env("ROUTE_PORT", port.to_string())
        .output()
        .expect("node must be installed for the compatibility test");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "seed story failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("compat: seed story passed"));
    let (clean, _) = server.terminate();
    assert!(clean);
}
