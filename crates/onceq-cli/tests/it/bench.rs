//! `onceq bench` in small: every phase runs against a real server on both
//! stores, accounts for every job, reports the CPU and context switches it
//! cost (the server's, and PostgreSQL's on that store), and leaves no queue
//! behind. (Speed is measured by the documented bench commands, never
//! asserted here: the CPU figures must be there and positive, not small.)

use serde_json::Value;

use crate::process::{ServerProcess, run_ok};

const KEY: &str = "bench-test-key";

/// Jobs per enqueue and work phase.
const JOBS: &str = "3000";

/// Runs the bench with `flags` besides; `postgres`: whether PostgreSQL's
/// CPU must be counted too.
fn bench_and_check(server: &ServerProcess, flags: &[&str], postgres: bool) {
    let vars = [("ONCEQ_URL", server.url.as_str()), ("ONCEQ_API_KEY", KEY)];
    let mut args = vec!["bench"];
    args.extend_from_slice(flags);
    let out = run_ok(
        &[
            args.as_slice(),
            &[
                "--jobs",
                // Enough that each phase costs PostgreSQL many clock ticks
                // (the CPU figures are read in ticks of 10 ms): with 300,
                // the batch and work phases cost it 1–3 ticks, and one
                // run in a loaded full suite read 0 for work2.
                JOBS,
                "--producers",
                "4",
                "--workers",
                "4",
                "--rates",
                "100",
                "--mixed-secs",
                "1",
                "--backlog",
                "200",
                "--backlog-settle-secs",
                "1",
                "--json",
            ],
        ]
        .concat(),
        &vars,
    );
    let r: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(r["system"], "onceq");
    assert_eq!(r["backlog"], 200);
    assert_eq!(r["backlog_fill"]["jobs"], 200);
    for phase in ["enqueue_single", "work", "enqueue_batch", "work2"] {
        assert_eq!(r[phase]["jobs"].to_string(), JOBS, "{phase}: {}", r[phase]);
        assert_eq!(r[phase]["timed_out"], false, "{phase}");
        assert!(r[phase]["jobs_per_s"].as_u64().unwrap() > 0, "{phase}");
    }
    let mixed = &r["mixed"]["100"];
    assert!(mixed["sent"].as_u64().unwrap() > 0, "{mixed}");
    assert_eq!(mixed["started"], mixed["sent"], "{mixed}");
    assert_eq!(
        (&mixed["errors"], &mixed["missing"]),
        (&0.into(), &0.into())
    );
    assert!(mixed["p99_ms"].as_f64().is_some(), "{mixed}");

    assert_eq!(
        r["cpu_watch"]["server_pid"],
        server.pid(),
        "{}",
        r["cpu_watch"]
    );
    assert_eq!(r["cpu_watch"]["postgres_pid"].is_u64(), postgres);
    for (phase, cpu) in ["enqueue_single", "work", "enqueue_batch", "work2"]
        .map(|p| (p, &r[p]["cpu"]))
        .into_iter()
        .chain([("mixed", &mixed["cpu"])])
    {
        let mut figures = vec![
            "server_cpu_us_per_job",
            "total_cpu_us_per_job",
            "server_context_switches_per_request",
        ];
        if postgres {
            figures.extend([
                "postgres_cpu_us_per_job",
                "postgres_context_switches_per_request",
            ]);
        } else {
            assert!(
                cpu.get("postgres_cpu_us_per_job").is_none(),
                "{phase}: {cpu}"
            );
        }
        for f in figures {
            let v = cpu[f].as_f64();
            assert!(v.is_some_and(|v| v > 0.0), "{phase}: {f} in {cpu}");
        }
        assert!(cpu["requests"].as_u64().unwrap() > 0, "{phase}: {cpu}");
    }

    let queues: Value = serde_json::from_str(&run_ok(&["queues", "--json"], &vars)).unwrap();
    let left: Vec<&Value> = queues
        .as_array()
        .unwrap()
        .iter()
        .filter(|q| q["name"].as_str().unwrap().starts_with("bench-"))
        .collect();
    assert!(left.is_empty(), "bench left queues behind: {left:?}");
}

#[test]
fn bench_runs_every_phase_on_the_embedded_store() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let server = ServerProcess::start(
        &["--data-dir", data.to_str().unwrap()],
        &[("ONCEQ_API_KEY", KEY)],
    );
    // The server found by the port it listens on.
    bench_and_check(&server, &[], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bench_runs_every_phase_on_postgres() {
    let db = onceq_testdb::fresh_database().await;
    let url = db.url.clone();
    tokio::task::spawn_blocking(move || {
        let server = ServerProcess::start(&["--database-url", &url], &[("ONCEQ_API_KEY", KEY)]);
        // The server named; PostgreSQL found behind its connections.
        let pid = server.pid().to_string();
        bench_and_check(&server, &["--server-pid", &pid], true);
    })
    .await
    .unwrap();
}
