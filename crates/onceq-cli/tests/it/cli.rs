//! The CLI against a real `onceq serve` on the embedded store.

use serde_json::Value;

use crate::process::{ServerProcess, run, run_ok};

#[test]
fn serve_publish_consume_stats_keys_and_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let server = ServerProcess::start(&["--data-dir", data], &[("ONCEQ_API_KEY", "cli-test-key")]);
    let env = [
        ("ONCEQ_URL", server.url.as_str()),
        ("ONCEQ_API_KEY", "cli-test-key"),
    ];

    let first = run_ok(
        &["publish", "jobs", r#"{"n": 1}"#, "--key", "k1", "--json"],
        &env,
    );
    let first: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(first["idempotent_replay"], false);
    let again: Value = serde_json::from_str(&run_ok(
        &["publish", "jobs", r#"{"n": 1}"#, "--key", "k1", "--json"],
        &env,
    ))
    .unwrap();
    assert_eq!(again["idempotent_replay"], true);
    assert_eq!(
        again["message"]["message_id"],
        first["message"]["message_id"]
    );
    let text = run_ok(&["publish", "jobs", r#"{"n": 2}"#, "--delay", "3600"], &env);
    assert!(
        text.contains("status") && text.contains("delayed"),
        "{text}"
    );

    let stats: Value = serde_json::from_str(&run_ok(&["stats", "jobs", "--json"], &env)).unwrap();
    assert_eq!(stats["message_count"], 2);
    assert_eq!(stats["delayed"], 1);
    let text = run_ok(&["stats", "jobs"], &env);
    assert!(
        text.contains("message_count") && text.contains('2'),
        "{text}"
    );

    let queues = run_ok(&["queues"], &env);
    assert!(queues.contains("jobs-dlq"), "{queues}");

    let got: Value = serde_json::from_str(&run_ok(
        &["consume", "jobs", "-n", "5", "--ack", "--json"],
        &env,
    ))
    .unwrap();
    assert_eq!(got.as_array().unwrap().len(), 1);
    assert_eq!(got[0]["payload"]["n"], 1);
    let stats: Value = serde_json::from_str(&run_ok(&["stats", "jobs", "--json"], &env)).unwrap();
    assert_eq!(stats["message_count"], 1, "the acked message is gone");

    // ack-batch: each lease answered, non-zero exit when one was not held
    run_ok(&["publish", "jobs", r#"{"n":3}"#], &env);
    run_ok(&["publish", "jobs", r#"{"n":4}"#], &env);
    let got: Value =
        serde_json::from_str(&run_ok(&["consume", "jobs", "-n", "5", "--json"], &env)).unwrap();
    let lease = |i: usize| {
        let m = &got[i];
        format!(
            "{}:{}",
            m["message_id"].as_str().unwrap(),
            m["receipt"].as_str().unwrap()
        )
    };
    let wrong = format!(
        "{}:rcpt_not_this_one",
        got[1]["message_id"].as_str().unwrap()
    );
    let out = run(&["ack-batch", "jobs", &lease(0), &wrong], &env);
    assert!(!out.status.success(), "one lease was not held");
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        printed.contains(&format!("acked {}", got[0]["message_id"].as_str().unwrap())),
        "{printed}"
    );
    assert!(printed.contains("LEASE_NOT_HELD"), "{printed}");
    run_ok(&["ack-batch", "jobs", &lease(1)], &env);
    let stats: Value = serde_json::from_str(&run_ok(&["stats", "jobs", "--json"], &env)).unwrap();
    assert_eq!(stats["message_count"], 1, "both acked");

    let moved = run_ok(&["dlq", "redrive", "jobs"], &env);
    assert!(moved.contains("moved 0"), "{moved}");

    // bad input: a clear error, non-zero exit
    let out = run(&["publish", "jobs", "{not json"], &env);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("valid JSON"));
    let out = run(&["stats", "nope"], &env);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not found"));

    // keys: created by a second process while the server runs
    let store = ["--data-dir", data];
    let new_key = run_ok(
        &[&["keys", "create", "--project", "other"][..], &store].concat(),
        &[],
    );
    let new_key = new_key.trim().to_owned();
    assert!(new_key.starts_with("oq_"), "{new_key}");
    let other_env = [
        ("ONCEQ_URL", server.url.as_str()),
        ("ONCEQ_API_KEY", new_key.as_str()),
    ];
    // another project: cannot see "jobs"
    let out = run(&["stats", "jobs"], &other_env);
    assert!(!out.status.success());
    run_ok(&["publish", "mine", "1"], &other_env);
    let listed = run_ok(&[&["keys", "list", "--json"][..], &store].concat(), &[]);
    let listed: Value = serde_json::from_str(&listed).unwrap();
    let other = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["project"] == "other")
        .unwrap()
        .clone();
    assert!(
        !listed.to_string().contains(&new_key),
        "secrets are never listed"
    );
    let id = other["key_id"].as_str().unwrap();
    run_ok(&[&["keys", "revoke", id][..], &store].concat(), &[]);
    let out = run(&["queues"], &other_env);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("UNAUTHORIZED"));

    let (clean, logs) = server.terminate();
    assert!(
        clean,
        "SIGTERM must exit cleanly; logs:\n{}",
        logs.join("\n")
    );
    assert!(logs.iter().any(|l| l.contains("stopped")), "{logs:?}");

    // acknowledged writes survived: a new server on the same dir sees them
    let server = ServerProcess::start(&["--data-dir", data], &[("ONCEQ_API_KEY", "cli-test-key")]);
    let env = [
        ("ONCEQ_URL", server.url.as_str()),
        ("ONCEQ_API_KEY", "cli-test-key"),
    ];
    let stats: Value = serde_json::from_str(&run_ok(&["stats", "jobs", "--json"], &env)).unwrap();
    assert_eq!(stats["message_count"], 1);
}

#[test]
fn serve_without_a_key_creates_one_and_prints_it_once() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let server = ServerProcess::start(&["--data-dir", data], &[]);
    // The reader thread hands lines over one by one: wait for the key line
    // itself rather than for whatever has arrived so far.
    let mut printed = Vec::new();
    let key = loop {
        match server
            .stdout_lines
            .recv_timeout(std::time::Duration::from_secs(10))
        {
            Ok(line) if line.trim().starts_with("oq_") => break line.trim().to_owned(),
            Ok(line) => printed.push(line),
            Err(_) => panic!("no key printed: {printed:?}"),
        }
    };
    let env = [
        ("ONCEQ_URL", server.url.as_str()),
        ("ONCEQ_API_KEY", key.as_str()),
    ];
    run_ok(&["queues"], &env);
    let (clean, _) = server.terminate();
    assert!(clean);

    let server = ServerProcess::start(&["--data-dir", data], &[]);
    // Anything the bootstrap printed came before the listening line; give
    // the reader thread time to pass it on.
    let printed: Vec<String> = std::iter::from_fn(|| {
        server
            .stdout_lines
            .recv_timeout(std::time::Duration::from_millis(500))
            .ok()
    })
    .collect();
    assert!(
        printed.iter().all(|l| !l.contains("oq_")),
        "a second key was printed: {printed:?}"
    );
    let env = [
        ("ONCEQ_URL", server.url.as_str()),
        ("ONCEQ_API_KEY", key.as_str()),
    ];
    run_ok(&["queues"], &env);
}

#[test]
fn serve_refuses_a_bad_database_url() {
    let out = run(
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--database-url",
            "mysql://x",
        ],
        &[],
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("postgres://"));
}
