//! `onceq keys` scopes, rotation and rate overrides, and `onceq projects`,
//! against a running server on the embedded store.

use serde_json::Value;

use crate::process::{ServerProcess, run, run_ok};

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn scoped_keys_rotation_and_project_limits_from_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let server = ServerProcess::start(
        &["--data-dir", data, "--prices", "queue.publish=0.00002"],
        &[("ONCEQ_API_KEY", "admin-key")],
    );
    let store = ["--data-dir", data];
    let cli = |args: &[&str]| run_ok(&[args, &store[..]].concat(), &[]);
    let as_key = |key: &str, args: &[&str]| {
        let env = [("ONCEQ_URL", server.url.as_str()), ("ONCEQ_API_KEY", key)];
        run(args, &env)
    };

    let web = cli(&[
        "keys",
        "create",
        "--project",
        "shop",
        "--actions",
        "publish",
        "--queues",
        "exports-*",
        "--expires-in",
        "30d",
    ]);
    let web = web.trim().to_owned();
    assert!(
        as_key(&web, &["publish", "exports-daily", "1"])
            .status
            .success()
    );
    let out = as_key(&web, &["publish", "billing", "1"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("may not use queue"));
    let out = as_key(&web, &["queues"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("FORBIDDEN"));

    let keys = json(&cli(&["keys", "list", "--json"]));
    let shop = keys
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["project"] == "shop")
        .unwrap()
        .clone();
    assert_eq!(shop["actions"], "publish");
    assert_eq!(shop["queues"], "exports-*");
    assert!(shop["expires_at"].is_string());
    let id = shop["key_id"].as_str().unwrap().to_owned();

    // rotation: both keys work, same scope
    let rotated = cli(&["keys", "rotate", &id, "--expire-old-in", "1h 30m"]);
    let rotated = rotated.trim().to_owned();
    assert_ne!(rotated, web);
    assert!(
        as_key(&rotated, &["publish", "exports-daily", "2"])
            .status
            .success()
    );
    assert!(
        as_key(&web, &["publish", "exports-daily", "3"])
            .status
            .success()
    );
    assert!(!as_key(&rotated, &["queues"]).status.success());
    cli(&["keys", "set-rate", &id, "--rate", "5", "--burst", "10"]);
    let out = run(
        &[&["keys", "set-rate", "nope", "--clear"][..], &store].concat(),
        &[],
    );
    assert!(!out.status.success());

    // projects: credit and rate
    let text = cli(&["projects", "set-credit", "shop", "0.5"]);
    assert!(text.contains("0.5"), "{text}");
    cli(&["projects", "set-rate", "shop", "--rate", "100"]);
    let projects = json(&cli(&["projects", "list", "--json"]));
    let shop = projects
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "shop")
        .unwrap()
        .clone();
    assert_eq!(shop["credit_limit_usd"], 0.5);
    assert_eq!(shop["rate_per_sec"], 100.0);
    assert_eq!(shop["rate_burst"], 100);
    let table = cli(&["projects", "list"]);
    assert!(table.contains("shop") && table.contains("100/s"), "{table}");
    cli(&["projects", "set-rate", "shop", "--clear"]);
    cli(&["projects", "set-credit", "shop", "none"]);
    for bad in [
        &["projects", "set-credit", "nope", "1"][..],
        &["projects", "set-credit", "shop", "-1"][..],
        &["projects", "set-credit", "shop", "lots"][..],
        &["keys", "create", "--actions", "write"][..],
        &["keys", "create", "--queues", "a b"][..],
    ] {
        let out = run(&[bad, &store[..]].concat(), &[]);
        assert!(!out.status.success(), "{bad:?} should fail");
    }

    // revocation: at once
    cli(&["keys", "revoke", &id]);
    assert!(
        !as_key(&web, &["publish", "exports-daily", "4"])
            .status
            .success()
    );
    assert!(
        as_key(&rotated, &["publish", "exports-daily", "5"])
            .status
            .success()
    );
    let (clean, logs) = server.terminate();
    assert!(clean, "{}", logs.join("\n"));
    assert!(
        logs.iter()
            .all(|l| !l.contains(&web) && !l.contains("admin-key")),
        "a key was logged"
    );
}

/// Keys never reach the server's log, even with every module at TRACE.
#[test]
fn keys_are_never_logged_even_at_trace() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let admin = "admin-key-that-must-stay-secret";
    let server = ServerProcess::start(
        &["--data-dir", data],
        &[("ONCEQ_API_KEY", admin), ("ONCEQ_LOG", "trace")],
    );
    let env = [("ONCEQ_URL", server.url.as_str()), ("ONCEQ_API_KEY", admin)];
    run_ok(&["publish", "jobs", r#"{"n": 1}"#], &env);
    run_ok(&["stats", "jobs"], &env);
    let wrong = "oq_wrongkey_notavalidkeybutlookslikeone000000000000";
    let bad = [("ONCEQ_URL", server.url.as_str()), ("ONCEQ_API_KEY", wrong)];
    assert!(!run(&["queues"], &bad).status.success());
    let (clean, logs) = server.terminate();
    assert!(clean);
    let logs = logs.join("\n");
    assert!(
        logs.contains("/v1/queue/publish"),
        "TRACE logging is on: {logs}"
    );
    assert!(!logs.contains(admin), "the key was logged:\n{logs}");
    assert!(!logs.contains(wrong), "a key was logged:\n{logs}");
    assert!(!logs.to_lowercase().contains("bearer"), "{logs}");
}
