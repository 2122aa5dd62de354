//! The container image: scripts/build-image builds it from the binary
//! under test (`FROM scratch`, packaging/container/Containerfile) into a
//! private podman, and the test runs it as a user would: publishes and
//! consumes through it, reads the health status podman reports, checks
//! the server runs as non-root, stops it with SIGTERM (`podman stop`) and
//! finds its data again in a new container on the same volume; then runs
//! it on a TLS-only PostgreSQL reached by host name.

use std::time::Instant;

use serde_json::Value;

use crate::{podman::Podman, process::run_ok};

const TAG: &str = "onceq:test";
const KEY: &str = "container-test-key";

/// Runs a container of the image on the volume `onceq-data`, listening on
/// `port` on the host's network, and waits until it listens.
fn start(podman: &Podman, name: &str, port: u16) {
    let listen = format!("ONCEQ_LISTEN=127.0.0.1:{port}");
    podman.ok(&[
        "run",
        "--detach",
        "--name",
        name,
        "--network",
        "host",
        "--env",
        &listen,
        "--env",
        &format!("ONCEQ_API_KEY={KEY}"),
        "--volume",
        "onceq-data:/var/lib/onceq",
        TAG,
    ]);
    podman.wait_for_log(name, "listening on");
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn image_serves_as_non_root_reports_health_drains_on_sigterm_keeps_its_volume_and_reaches_postgres_over_tls()
 {
    let began = Instant::now();
    let podman = Podman::new();
    podman.build_image(TAG);
    let built = began.elapsed();

    let port = free_port();
    start(&podman, "onceq-1", port);
    let url = format!("http://127.0.0.1:{port}");
    let env = [("ONCEQ_URL", url.as_str()), ("ONCEQ_API_KEY", KEY)];

    // The image's HEALTHCHECK (`onceq health` inside it), run as podman's
    // timer would (there is no systemd here to run the timer).
    podman.ok(&["healthcheck", "run", "onceq-1"]);
    assert_eq!(
        podman.ok(&["inspect", "--format", "{{.State.Health.Status}}", "onceq-1"]),
        "healthy"
    );

    // Non-root: the server process, seen from the host, has onceq's uid.
    let pid = podman.ok(&["inspect", "--format", "{{.State.Pid}}", "onceq-1"]);
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let uid = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
    assert_eq!(
        uid.split_whitespace().skip(1).collect::<Vec<_>>(),
        ["10001"; 4],
        "{uid}"
    );
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap();
    assert_eq!(comm.trim(), "onceq", "the server is the container's PID 1");

    // Publish two, consume one; the other must outlive the container.
    for (n, key) in [(1, "c1"), (2, "c2")] {
        let out: Value = serde_json::from_str(&run_ok(
            &[
                "publish",
                "jobs",
                &format!(r#"{{"n": {n}}}"#),
                "--key",
                key,
                "--json",
            ],
            &env,
        ))
        .unwrap();
        assert_eq!(out["idempotent_replay"], false);
    }
    let got: Value =
        serde_json::from_str(&run_ok(&["consume", "jobs", "--ack", "--json"], &env)).unwrap();
    assert_eq!(got[0]["payload"]["n"], 1, "{got}");

    // SIGTERM to PID 1: the server's own handler drains and exits 0
    // (without one, podman would SIGKILL it after the timeout: 137).
    let stopping = Instant::now();
    podman.ok(&["stop", "--time", "30", "onceq-1"]);
    let stop_took = stopping.elapsed();
    assert_eq!(
        podman.ok(&["inspect", "--format", "{{.State.ExitCode}}", "onceq-1"]),
        "0"
    );
    let logs = podman.command(&["logs", "onceq-1"]).output().unwrap();
    let logs = String::from_utf8_lossy(&logs.stderr);
    assert!(
        logs.contains("shutting down") && logs.contains("stopped"),
        "{logs}"
    );
    podman.ok(&["rm", "onceq-1"]);
    let down = crate::process::run(&["health", "--url", &url], &[]);
    assert!(!down.status.success(), "onceq health fails with no server");
    let said = String::from_utf8_lossy(&down.stderr);
    assert!(said.contains("is the server running?"), "{said}");

    // A new container on the same volume: the waiting message and the
    // idempotency key are still there.
    start(&podman, "onceq-2", port);
    let again: Value = serde_json::from_str(&run_ok(
        &["publish", "jobs", r#"{"n": 1}"#, "--key", "c1", "--json"],
        &env,
    ))
    .unwrap();
    assert_eq!(again["idempotent_replay"], true, "{again}");
    let got: Value =
        serde_json::from_str(&run_ok(&["consume", "jobs", "--ack", "--json"], &env)).unwrap();
    assert_eq!(got[0]["payload"]["n"], 2, "{got}");
    podman.ok(&["stop", "onceq-2"]);

    on_postgres_over_tls(&podman, port);
    eprintln!(
        "container test: image built in {built:?}, stopped in {stop_took:?}, {:?} in all",
        began.elapsed()
    );
}

/// The image on a TLS-only PostgreSQL, reached by host name with
/// verify-full: the container's resolver files (/etc/nsswitch.conf, the
/// hosts file podman writes) and the copied libraries do their part, and
/// the CA is given as a mounted file, as a deployment would.
fn on_postgres_over_tls(podman: &Podman, port: u16) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (cluster, db) = rt.block_on(async {
        let c = onceq_testdb::shared_tls_cluster().await;
        (c, c.cluster.create_database().await.name)
    });
    // A copy the container's user can read, whoever owns the original.
    let ca = tempfile::NamedTempFile::new().unwrap();
    std::fs::copy(&cluster.files.ca, ca.path()).unwrap();
    std::fs::set_permissions(
        ca.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )
    .unwrap();
    let url = cluster.url(
        "localhost",
        &db,
        "sslmode=verify-full&sslrootcert=/etc/onceq/ca.crt",
    );
    podman.ok(&[
        "run",
        "--detach",
        "--name",
        "onceq-pg",
        "--network",
        "host",
        "--env",
        &format!("ONCEQ_LISTEN=127.0.0.1:{port}"),
        "--env",
        &format!("ONCEQ_API_KEY={KEY}"),
        "--env",
        &format!("DATABASE_URL={url}"),
        "--volume",
        &format!("{}:/etc/onceq/ca.crt:ro", ca.path().display()),
        TAG,
    ]);
    let logs = podman.wait_for_log("onceq-pg", "listening on");
    assert!(logs.iter().any(|l| l.contains("PostgreSQL at")), "{logs:?}");
    let url = format!("http://127.0.0.1:{port}");
    let env = [("ONCEQ_URL", url.as_str()), ("ONCEQ_API_KEY", KEY)];
    run_ok(&["publish", "jobs", r#"{"n": 3}"#], &env);
    let got: Value =
        serde_json::from_str(&run_ok(&["consume", "jobs", "--ack", "--json"], &env)).unwrap();
    assert_eq!(got[0]["payload"]["n"], 3, "{got}");
}
