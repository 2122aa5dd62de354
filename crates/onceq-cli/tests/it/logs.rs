//! The server's log as its environment asks: `RUST_LOG` honoured,
//! `ONCEQ_LOG` winning over it, and `--log-format json` writing one JSON
//! object per line with the request id on the request's lines.

use crate::process::ServerProcess;

fn served_logs(args: &[&str], envs: &[(&str, &str)], unset: &[&str]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let all = [&["--data-dir", dir.path().to_str().unwrap()][..], args].concat();
    let mut cmd = ServerProcess::command(&all, envs);
    for name in unset {
        cmd.env_remove(name);
    }
    let server = ServerProcess::spawn_waiting(cmd);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let status = rt.block_on(async {
        reqwest::Client::new()
            .post(format!("{}/v1/queue/publish", server.url))
            .bearer_auth("log-key")
            .header("x-request-id", "log-req-42")
            .json(&serde_json::json!({"queue": "jobs", "payload": {"n": 1}}))
            .send()
            .await
            .unwrap()
            .status()
    });
    assert_eq!(status, 200);
    let (clean, logs) = server.terminate();
    assert!(clean, "{}", logs.join("\n"));
    logs
}

#[test]
fn rust_log_is_honoured_and_onceq_log_wins() {
    // Only the serve module's INFO (its "listening" line tells the test
    // where the server is); every other INFO line (the migrations', the
    // store's) is gone.
    let logs = served_logs(
        &[],
        &[
            ("ONCEQ_API_KEY", "log-key"),
            ("RUST_LOG", "warn,onceq_server::serve=info"),
        ],
        &["ONCEQ_LOG"],
    );
    let info: Vec<_> = logs.iter().filter(|l| l.contains(" INFO ")).collect();
    assert!(info.iter().any(|l| l.contains("listening on")), "{logs:#?}");
    let others: Vec<_> = info
        .iter()
        .filter(|l| !l.contains(" onceq_server::serve: "))
        .collect();
    assert!(
        others.is_empty(),
        "RUST_LOG=warn let these through: {others:#?}"
    );

    // Both set: ONCEQ_LOG's debug wins over RUST_LOG's warn.
    let logs = served_logs(
        &[],
        &[
            ("ONCEQ_API_KEY", "log-key"),
            ("RUST_LOG", "warn"),
            ("ONCEQ_LOG", "debug"),
        ],
        &[],
    );
    assert!(
        logs.iter()
            .any(|l| l.contains(" DEBUG ") && l.contains("request finished")),
        "{logs:#?}"
    );
}

#[test]
fn json_lines_parse_and_carry_the_request_id() {
    let logs = served_logs(
        &["--log-format", "json"],
        &[
            ("ONCEQ_API_KEY", "log-key"),
            ("ONCEQ_LOG", "info,onceq_server::telemetry=debug"),
        ],
        &[],
    );
    let lines: Vec<serde_json::Value> = logs
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert!(
        lines
            .iter()
            .all(|l| l["level"].is_string() && l["timestamp"].is_string())
    );
    let listening = lines
        .iter()
        .find(|l| {
            l["message"]
                .as_str()
                .is_some_and(|m| m.contains("listening"))
        })
        .expect("a listening line");
    assert_eq!(listening["level"], "INFO");
    let finished = lines
        .iter()
        .find(|l| l["message"] == "request finished")
        .unwrap_or_else(|| panic!("no request line: {logs:#?}"));
    assert_eq!(finished["status"], 200);
    assert_eq!(finished["spans"][0]["request_id"], "log-req-42");
    assert_eq!(finished["spans"][0]["http.route"], "/v1/queue/publish");
}
