//! `onceq webhooks …` against a real `onceq serve` on the embedded store:
//! register (the secret shown once), list, test (an attempt to an endpoint
//! that refuses connections: retrying, with its error), deliveries, delete.

use serde_json::Value;

use crate::process::{ServerProcess, run, run_ok};

#[test]
fn register_list_test_deliveries_delete() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let server = ServerProcess::start(
        &["--data-dir", data, "--push-allow-loopback"],
        &[("ONCEQ_API_KEY", "cli-hooks-key")],
    );
    let env = [
        ("ONCEQ_URL", server.url.as_str()),
        ("ONCEQ_API_KEY", "cli-hooks-key"),
    ];
    // A port nothing listens on: the attempt's connection is refused.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/in", closed.local_addr().unwrap());
    drop(closed);
    let made: Value = serde_json::from_str(&run_ok(
        &[
            "webhooks",
            "register",
            &url,
            "--events",
            "queue.created,message.failed",
            "--header",
            "X-Team=ops",
            "--json",
        ],
        &env,
    ))
    .unwrap();
    let id = made["id"].as_str().unwrap().to_owned();
    assert!(made["secret"].as_str().unwrap().starts_with("whsec_"));
    assert_eq!(made["headers"]["x-team"], "ops");
    let text = run_ok(&["webhooks", "list"], &env);
    assert!(
        text.contains(&id) && text.contains("queue.created,message.failed"),
        "{text}"
    );
    assert!(!text.contains("whsec_"), "{text}");

    let attempt: Value =
        serde_json::from_str(&run_ok(&["webhooks", "test", &id, "--json"], &env)).unwrap();
    assert_eq!(attempt["outcome"], "retrying");
    assert_eq!(attempt["event"], "webhook.test");
    assert!(
        attempt["error"].as_str().unwrap().contains("connection"),
        "{attempt}"
    );
    let text = run_ok(&["webhooks", "deliveries", &id], &env);
    assert!(
        text.contains("webhook.test") && text.contains("retrying"),
        "{text}"
    );

    let out = run(
        &["webhooks", "register", &url, "--events", "queue.exploded"],
        &env,
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("queue.exploded") && err.contains("message.dead_lettered"),
        "{err}"
    );

    assert!(run_ok(&["webhooks", "delete", &id], &env).contains(&id));
    let out = run(&["webhooks", "test", &id], &env);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not found"));
}
