//! A message's life from the command line: `queue create
//! --completed-retention`, `ack --result`, `message get` with attempts,
//! `last_error` and `result` (withheld from a key without `peek`), `dlq
//! redrive --id`, `cancel`, on the embedded
//! store and on PostgreSQL.

use serde_json::{Value, json};

use crate::process::{ServerProcess, run, run_ok};

const KEY: &str = "life-key";

fn json(args: &[&str], env: &[(&str, &str)]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let out = run_ok(&all, env);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out}"))
}

/// One message consumed from `queue`: (id, receipt).
fn take(queue: &str, env: &[(&str, &str)]) -> (String, String) {
    let got = json(&["consume", queue], env);
    (
        got[0]["message_id"].as_str().unwrap().to_owned(),
        got[0]["receipt"].as_str().unwrap().to_owned(),
    )
}

fn life(server: &ServerProcess) {
    let env = [("ONCEQ_URL", server.url.as_str()), ("ONCEQ_API_KEY", KEY)];
    let q = json(
        &[
            "queue",
            "create",
            "jobs",
            "--max-retries",
            "0",
            "--completed-retention",
            "600",
        ],
        &env,
    );
    assert_eq!(q["completed_retention_seconds"], 600);

    // ack --result keeps the message as completed, with its result
    run_ok(&["publish", "jobs", r#"{"n": 1}"#], &env);
    let (id, receipt) = take("jobs", &env);
    run_ok(
        &[
            "ack",
            "jobs",
            &id,
            "--receipt",
            &receipt,
            "--result",
            r#"{"rows": 3}"#,
        ],
        &env,
    );
    let m = json(&["message", "get", "jobs", &id], &env);
    assert_eq!(m["state"], "completed");
    assert_eq!(m["result"], json!({"rows": 3}));
    let text = run_ok(&["message", "get", "jobs", &id], &env);
    assert!(
        text.contains(r#"{"rows":3}"#) && text.contains("#1 acked"),
        "{text}"
    );
    // A key allowed `read` but not `peek` gets the record, not the
    // payload nor the result (docs/security.md, "Payloads and `peek`").
    let read_only = run_ok(
        &[
            "keys",
            "create",
            "--project",
            "default",
            "--actions",
            "read",
            "--url",
            &server.url,
        ],
        &env,
    );
    let blind = [
        ("ONCEQ_URL", server.url.as_str()),
        ("ONCEQ_API_KEY", read_only.trim()),
    ];
    let m = json(&["message", "get", "jobs", &id], &blind);
    assert_eq!(m["state"], "completed");
    assert_eq!(m["payload_withheld"], true);
    assert!(m["payload"].is_null() && m["result"].is_null(), "{m}");
    let text = run_ok(&["message", "get", "jobs", &id], &blind);
    assert!(
        text.contains("withheld") && !text.contains("rows") && text.contains("#1 acked"),
        "{text}"
    );
    assert!(json(&["message", "get", "jobs", &id], &env)["payload"] == json!({"n": 1}));
    let bad = run(&["ack", "jobs", &id, "--result", "{not json"], &env);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--result"));

    // nack --error: the reason is the dead letter's last error and attempt
    run_ok(&["publish", "jobs", r#"{"n": 2}"#], &env);
    let (dead, receipt) = take("jobs", &env);
    run_ok(
        &[
            "nack",
            "jobs",
            &dead,
            "--receipt",
            &receipt,
            "--error",
            "disk full",
        ],
        &env,
    );
    let text = run_ok(&["message", "get", "jobs", &dead], &env);
    assert!(
        text.contains("dead_lettered")
            && text.contains("#1 dead_lettered")
            && text.contains(": disk full"),
        "{text}"
    );

    // dlq redrive --id moves the chosen one, and says what it did not find
    let r = json(
        &[
            "dlq",
            "redrive",
            "jobs",
            "--id",
            &dead,
            "--id",
            "qmsg_missing",
        ],
        &env,
    );
    assert_eq!(r["redriven"], 1);
    assert_eq!(r["not_found"], json!(["qmsg_missing"]));
    let m = json(&["message", "get", "jobs", &dead], &env);
    assert_eq!(m["state"], "available");
    assert_eq!(m["last_error"], "disk full", "kept through the redrive");

    // cancel removes it (kept as cancelled here); a second cancel fails
    let text = run_ok(&["cancel", "jobs", &dead], &env);
    assert!(text.contains(&format!("cancelled {dead}")), "{text}");
    assert_eq!(
        json(&["message", "get", "jobs", &dead], &env)["state"],
        "cancelled"
    );
    let again = run(&["cancel", "jobs", &dead], &env);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("holds no message"));
}

#[test]
fn life_commands_on_the_embedded_store() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(
        &["--data-dir", dir.path().to_str().unwrap()],
        &[("ONCEQ_API_KEY", KEY)],
    );
    life(&server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn life_commands_on_postgres() {
    let db = onceq_testdb::fresh_database().await;
    let url = db.url.clone();
    tokio::task::spawn_blocking(move || {
        let server = ServerProcess::on_postgres(&url, KEY, &[]);
        life(&server);
    })
    .await
    .unwrap();
}

/// `ONCEQ_COMPLETED_RETENTION_SECONDS` is the default of a create that
/// gives none; a value out of range stops `serve` naming the flag.
#[test]
fn the_server_wide_completed_retention() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(
        &["--data-dir", dir.path().to_str().unwrap()],
        &[
            ("ONCEQ_API_KEY", KEY),
            ("ONCEQ_COMPLETED_RETENTION_SECONDS", "90"),
        ],
    );
    let env = [("ONCEQ_URL", server.url.as_str()), ("ONCEQ_API_KEY", KEY)];
    let q = json(&["queue", "create", "jobs"], &env);
    assert_eq!(q["completed_retention_seconds"], 90);

    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &[
            "serve",
            "--data-dir",
            dir.path().to_str().unwrap(),
            "--completed-retention-seconds",
            "2592001",
        ],
        &[],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--completed-retention-seconds"), "{err}");
}
