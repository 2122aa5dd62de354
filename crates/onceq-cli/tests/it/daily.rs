//! The commands of daily work against a running server: `queue
//! create|update|get|delete|pause|resume`, `queues` with depths, `ack`, `nack`,
//! `extend`, `message get`, `dlq list|peek`, on the embedded store and on
//! PostgreSQL, and the top-level help listing every command.

use serde_json::Value;

use crate::process::{ServerProcess, run, run_ok};

const KEY: &str = "daily-key";

fn json(args: &[&str], env: &[(&str, &str)]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let out = run_ok(&all, env);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out}"))
}

/// One message consumed from `queue`: (id, receipt).
fn take(queue: &str, env: &[(&str, &str)]) -> (String, String) {
    let got = json(&["consume", queue], env);
    let m = &got[0];
    (
        m["message_id"].as_str().unwrap().to_owned(),
        m["receipt"].as_str().unwrap().to_owned(),
    )
}

/// Every new command once, checking what each printed and what it did.
fn daily_work(server: &ServerProcess) {
    let env = [("ONCEQ_URL", server.url.as_str()), ("ONCEQ_API_KEY", KEY)];

    // queue create / get / update
    let q = json(&["queue", "create", "jobs", "--max-retries", "1"], &env);
    assert_eq!(
        (q["name"].as_str(), q["max_retries"].as_i64()),
        (Some("jobs"), Some(1))
    );
    let text = run_ok(&["queue", "get", "jobs"], &env);
    assert!(
        text.contains("dead_letter_queue") && text.contains("jobs-dlq"),
        "{text}"
    );
    let q = json(
        &[
            "queue",
            "update",
            "jobs",
            "--visibility-timeout",
            "120",
            "--enable-priority",
            "false",
        ],
        &env,
    );
    assert_eq!(q["visibility_timeout_default"], 120);
    assert_eq!(q["enable_priority"], false);
    assert_eq!(q["max_retries"], 1, "kept");
    let text = run_ok(&["queue", "update", "jobs", "--max-retries", "0"], &env);
    assert!(text.contains("max_retries") && text.contains('0'), "{text}");

    // --retry-backoff sets, shows and removes it
    let q = json(
        &[
            "queue",
            "update",
            "jobs",
            "--retry-backoff",
            "initial=5,max=60,jitter=0.5",
        ],
        &env,
    );
    assert_eq!(
        q["retry_backoff"],
        serde_json::json!({"initial_seconds": 5, "multiplier": 2.0, "max_seconds": 60, "jitter": 0.5})
    );
    let text = run_ok(&["queue", "get", "jobs"], &env);
    assert!(
        text.contains("initial=5,max=60,multiplier=2,jitter=0.5"),
        "{text}"
    );
    let q = json(
        &["queue", "update", "jobs", "--retry-backoff", "none"],
        &env,
    );
    assert_eq!(q["retry_backoff"], Value::Null);
    let bad = run(
        &[
            "queue",
            "update",
            "jobs",
            "--retry-backoff",
            "initial=5,max=1",
        ],
        &env,
    );
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        !bad.status.success() && err.contains("retry_backoff.max_seconds"),
        "{err}"
    );

    // --max-in-flight / --rate-per-sec set and remove the limits
    let q = json(
        &[
            "queue",
            "update",
            "jobs",
            "--max-in-flight",
            "2",
            "--rate-per-sec",
            "1.5",
        ],
        &env,
    );
    assert_eq!(
        (q["max_in_flight"].as_i64(), q["rate_per_sec"].as_f64()),
        (Some(2), Some(1.5))
    );
    let text = run_ok(&["queue", "get", "jobs"], &env);
    assert!(
        text.contains("max_in_flight") && text.contains("1.5"),
        "{text}"
    );
    let q = json(
        &[
            "queue",
            "update",
            "jobs",
            "--max-in-flight",
            "none",
            "--rate-per-sec",
            "none",
        ],
        &env,
    );
    assert_eq!(
        (q["max_in_flight"].clone(), q["rate_per_sec"].clone()),
        (Value::Null, Value::Null)
    );
    let bad = run(&["queue", "update", "jobs", "--max-in-flight", "0"], &env);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("max_in_flight"));

    // queue pause / resume: nothing handed out in between
    let text = run_ok(&["queue", "pause", "jobs"], &env);
    assert_eq!(text.trim(), "queue jobs is paused");
    assert_eq!(json(&["queue", "pause", "jobs"], &env)["paused"], true);
    assert_eq!(json(&["queue", "get", "jobs"], &env)["paused"], true);
    run_ok(&["publish", "jobs", r#"{"n": 0}"#], &env);
    assert_eq!(json(&["consume", "jobs"], &env), serde_json::json!([]));
    let text = run_ok(&["stats", "jobs"], &env);
    assert!(text.contains("paused") && text.contains("true"), "{text}");
    let text = run_ok(&["queue", "resume", "jobs"], &env);
    assert_eq!(text.trim(), "queue jobs is running");
    let (id, receipt) = take("jobs", &env);
    run_ok(&["ack", "jobs", &id, "--receipt", &receipt], &env);
    let missing = run(&["queue", "pause", "nope"], &env);
    assert!(!missing.status.success());
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(
        err.contains("QUEUE_NOT_FOUND") || err.contains("not found"),
        "{err}"
    );

    // ack
    run_ok(&["publish", "jobs", r#"{"n": 1}"#], &env);
    let (id, receipt) = take("jobs", &env);
    let text = run_ok(&["ack", "jobs", &id, "--receipt", &receipt], &env);
    assert_eq!(text.trim(), format!("acked {id}"));
    let again = run(&["ack", "jobs", &id, "--receipt", &receipt], &env);
    assert!(!again.status.success(), "a second ack acks nothing");
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(
        err.contains("is not held") && err.contains("hint:"),
        "{err}"
    );

    // extend, then message get shows the longer lease
    run_ok(&["publish", "jobs", r#"{"n": 2}"#, "--key", "k-2"], &env);
    let (id, receipt) = take("jobs", &env);
    let e = json(
        &[
            "extend",
            "jobs",
            &id,
            "--receipt",
            &receipt,
            "--visibility-timeout",
            "600",
        ],
        &env,
    );
    assert_eq!(e["extended"], true);
    let m = json(&["message", "get", "jobs", &id], &env);
    assert_eq!(m["state"], "in_flight");
    assert_eq!(m["lease_expires_at"], e["lease_expires_at"]);
    assert_eq!(m["idempotency_key"], "k-2");
    assert_eq!(m["payload"], serde_json::json!({"n": 2}));

    // nack with an error: max_retries 0, so it is dead-lettered
    let n = json(
        &[
            "nack",
            "jobs",
            &id,
            "--receipt",
            &receipt,
            "--error",
            "export failed: disk full",
        ],
        &env,
    );
    assert_eq!(
        (n["nacked"].as_bool(), n["dead_lettered"].as_bool()),
        (Some(true), Some(true))
    );
    let text = run_ok(&["message", "get", "jobs", &id], &env);
    assert!(
        text.contains("dead_lettered") && text.contains(&id),
        "{text}"
    );

    // nack --delay gives it back delayed
    run_ok(&["publish", "jobs", r#"{"n": 3}"#], &env);
    let (id3, receipt3) = take("jobs", &env);
    run_ok(&["queue", "update", "jobs", "--max-retries", "5"], &env);
    let text = run_ok(
        &[
            "nack",
            "jobs",
            &id3,
            "--receipt",
            &receipt3,
            "--delay",
            "3600",
        ],
        &env,
    );
    assert!(text.contains("gave") && text.contains(&id3), "{text}");
    assert_eq!(
        json(&["message", "get", "jobs", &id3], &env)["state"],
        "delayed"
    );

    // queues with depths
    let depths = json(&["queues"], &env);
    let jobs = depths
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == "jobs")
        .unwrap_or_else(|| panic!("{depths}"));
    assert_eq!(jobs["stats"]["message_count"], 1);
    assert_eq!(jobs["stats"]["delayed"], 1);
    assert_eq!(jobs["stats"]["dead_lettered"], 1);
    let table = run_ok(&["queues"], &env);
    let header = table.lines().next().unwrap();
    for col in [
        "NAME",
        "MESSAGES",
        "AVAILABLE",
        "IN FLIGHT",
        "DELAYED",
        "DEAD LETTERED",
    ] {
        assert!(header.contains(col), "{table}");
    }
    let row = table.lines().find(|l| l.starts_with("jobs ")).unwrap();
    assert_eq!(
        row.split_whitespace().take(7).collect::<Vec<_>>(),
        ["jobs", "standard", "1", "0", "0", "1", "1"],
        "{table}"
    );

    // dlq list and peek: the dead letter is shown and stays
    let list = run_ok(&["dlq", "list"], &env);
    let row = list.lines().find(|l| l.starts_with("jobs ")).unwrap();
    assert_eq!(
        row.split_whitespace().collect::<Vec<_>>(),
        ["jobs", "jobs-dlq", "1"]
    );
    let peeked = json(&["dlq", "peek", "jobs"], &env);
    assert_eq!(peeked.as_array().unwrap().len(), 1);
    assert_eq!(peeked[0]["message_id"], id.as_str());
    let text = run_ok(&["dlq", "peek", "jobs", "-n", "3"], &env);
    assert!(text.contains(&id) && text.contains(r#"{"n":2}"#), "{text}");
    assert_eq!(
        json(&["stats", "jobs"], &env)["dead_lettered"],
        1,
        "still a dead letter"
    );
    assert_eq!(
        json(&["message", "get", "jobs", &id], &env)["state"],
        "dead_lettered"
    );

    // queue delete: refuses without a terminal unless --yes
    let out = run(&["queue", "delete", "jobs"], &env);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("hint: pass --yes"), "{err}");
    let text = run_ok(&["queue", "delete", "jobs", "--yes"], &env);
    assert!(
        text.contains("deleted queue jobs") && text.contains("1 message"),
        "{text}"
    );
    let out = run(&["queue", "get", "jobs"], &env);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("QUEUE_NOT_FOUND"));
}

#[test]
fn daily_commands_on_the_embedded_store() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(
        &["--data-dir", dir.path().to_str().unwrap()],
        &[("ONCEQ_API_KEY", KEY)],
    );
    daily_work(&server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn daily_commands_on_postgres() {
    let db = onceq_testdb::fresh_database().await;
    let url = db.url.clone();
    tokio::task::spawn_blocking(move || {
        let server = ServerProcess::on_postgres(&url, KEY, &[]);
        daily_work(&server);
    })
    .await
    .unwrap();
}

#[test]
fn top_level_help_lists_every_command_with_a_line() {
    let help = run_ok(&["--help"], &[]);
    for command in [
        "serve", "keys", "projects", "publish", "consume", "ack", "nack", "extend", "stats",
        "queues", "queue", "message", "cancel", "purge", "dlq", "bench",
    ] {
        let line = help
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{command} ")))
            .unwrap_or_else(|| panic!("{command} is not in the help:\n{help}"));
        let description = line.trim_start()[command.len()..].trim();
        assert!(
            description.len() > 10,
            "{command} has no description: {line:?}"
        );
    }
    for (group, subcommands) in [
        ("queue", &["create", "update", "delete", "get"][..]),
        ("dlq", &["list", "peek", "redrive"][..]),
        ("message", &["get"][..]),
    ] {
        let help = run_ok(&[group, "--help"], &[]);
        for sub in subcommands {
            assert!(
                help.lines()
                    .any(|l| l.trim_start().starts_with(&format!("{sub} "))),
                "{group} {sub}:\n{help}"
            );
        }
    }
}
