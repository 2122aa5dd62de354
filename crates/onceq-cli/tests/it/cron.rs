//! `onceq cron …` against a real `onceq serve` (embedded store, system
//! clock, no system tzdb): create, list, get, pause, resume, delete, their
//! errors, and a one-shot fired by the server's own loop (waited for with a
//! long-polling consume, not a sleep).

use serde_json::Value;

use crate::process::{ServerProcess, run, run_ok};

#[test]
fn cron_commands_and_a_one_shot_fired_by_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let server = ServerProcess::start(
        &["--data-dir", data, "--push-allow-loopback"],
        // No system tzdb where the server looks (as in the FROM scratch
        // image): zones come from the copy bundled in the binary.
        &[
            ("ONCEQ_API_KEY", "cron-cli-key"),
            ("TZDIR", "/nonexistent-tzdb"),
        ],
    );
    let env = [
        ("ONCEQ_URL", server.url.as_str()),
        ("ONCEQ_API_KEY", "cron-cli-key"),
    ];
    run_ok(&["queue", "create", "reports"], &env);

    let daily: Value = serde_json::from_str(&run_ok(
        &[
            "cron",
            "create",
            "--queue",
            "reports",
            "--cron",
            "30 2 * * *",
            "--timezone",
            "Europe/Berlin",
            "--payload",
            r#"{"kind":"daily"}"#,
            "--header",
            "x-src=cli",
            "--name",
            "nightly",
            "--skip-overlap",
            "--json",
        ],
        &env,
    ))
    .unwrap();
    let id = daily["job_id"].as_str().unwrap().to_owned();
    assert_eq!(daily["timezone"], "Europe/Berlin");
    assert_eq!(daily["overlap_policy"], "skip");
    assert_eq!(daily["headers"]["x-src"], "cli");

    let at = (jiff::Timestamp::now() + jiff::SignedDuration::from_secs(1)).to_string();
    let once: Value = serde_json::from_str(&run_ok(
        &[
            "cron",
            "create",
            "--queue",
            "reports",
            "--at",
            &at,
            "--payload",
            r#"{"once":true}"#,
            "--json",
        ],
        &env,
    ))
    .unwrap();
    let once_id = once["job_id"].as_str().unwrap().to_owned();

    let list = run_ok(&["cron", "list"], &env);
    assert!(list.contains(&id) && list.contains(&once_id), "{list}");
    assert!(list.contains("30 2 * * * (Europe/Berlin)"), "{list}");

    // The server's loop fires the one-shot at its time.
    let got: Value = serde_json::from_str(&run_ok(
        &["consume", "reports", "--wait", "15", "--ack", "--json"],
        &env,
    ))
    .unwrap();
    assert_eq!(got[0]["payload"]["once"], true, "{got}");
    let shown = run_ok(&["cron", "get", &once_id], &env);
    assert!(shown.contains("published"), "{shown}");
    let fired: Value =
        serde_json::from_str(&run_ok(&["cron", "get", &once_id, "--json"], &env)).unwrap();
    assert_eq!(fired["run_count"], 1);
    assert_eq!(fired["runs"][0]["message_id"], got[0]["message_id"]);

    let paused: Value =
        serde_json::from_str(&run_ok(&["cron", "pause", &id, "--json"], &env)).unwrap();
    assert_eq!(paused["paused"], true);
    let resumed: Value =
        serde_json::from_str(&run_ok(&["cron", "resume", &id, "--json"], &env)).unwrap();
    assert_eq!(resumed["paused"], false);
    let deleted = run_ok(&["cron", "delete", &id], &env);
    assert!(deleted.contains(&id), "{deleted}");

    // A task schedule: its signing secret is printed once.
    let task = run_ok(
        &[
            "cron",
            "create",
            "--task",
            "http://127.0.0.1:9/hook",
            "--cron",
            "@daily",
        ],
        &env,
    );
    assert!(task.contains("secret: whsec_"), "{task}");
    assert!(task.contains("http://127.0.0.1:9/hook"), "{task}");

    // Errors say what is wrong, and exit non-zero.
    let out = run(&["cron", "get", &id], &env);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not found"));
    let out = run(
        &[
            "cron",
            "create",
            "--queue",
            "reports",
            "--cron",
            "61 * * * *",
        ],
        &env,
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cron_expr"));
    let out = run(
        &[
            "cron",
            "create",
            "--queue",
            "reports",
            "--cron",
            "@daily",
            "--timezone",
            "Mars/Base",
        ],
        &env,
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("timezone"));
}
