//! What the CLI says when something is wrong: each cause once, then a
//! hint. Run as the real binary; the texts are the subject.

use crate::process::{ServerProcess, run};

/// stderr of a failed run.
fn failure(args: &[&str], env: &[(&str, &str)]) -> String {
    let out = run(args, env);
    assert!(!out.status.success(), "onceq {args:?} succeeded");
    String::from_utf8(out.stderr).unwrap()
}

/// A port nothing listens on: bound, then let go.
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn no_server_is_said_once_with_how_to_start_one() {
    let url = format!("http://127.0.0.1:{}", closed_port());
    let err = failure(&["queues", "--url", &url, "--api-key", "k"], &[]);
    assert_eq!(err.matches("Connection refused").count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "hint: is the server running at {url}? start it with `onceq serve`"
        )),
        "{err}"
    );
    assert_eq!(err.lines().count(), 2, "one error line, one hint: {err}");
}

#[test]
fn a_url_without_a_scheme_says_how_to_write_one() {
    let err = failure(
        &["stats", "jobs", "--url", "127.0.0.1:8787", "--api-key", "k"],
        &[],
    );
    assert!(!err.contains("relative URL without a base"), "{err}");
    assert!(err.contains("--url \"127.0.0.1:8787\""), "{err}");
    assert!(err.contains("hint: use http://host:port"), "{err}");
}

/// Every piece of the `error:` line once: no cause repeats another.
#[track_caller]
fn said_once(err: &str) {
    let error_line = err
        .lines()
        .find(|l| l.starts_with("error: "))
        .unwrap_or_else(|| panic!("{err}"));
    let parts: Vec<&str> = error_line["error: ".len()..].split(": ").collect();
    for (i, part) in parts.iter().enumerate() {
        assert!(
            !parts[i + 1..]
                .iter()
                .any(|later| later.contains(part) || part.contains(later)),
            "{part:?} said twice: {err}"
        );
    }
    assert!(err.contains("hint:"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_error_is_said_once() {
    // A real PostgreSQL refusing: the database named does not exist. The
    // server's error is wrapped by the driver and by the store; it used to
    // be printed three times.
    let db = onceq_testdb::fresh_database().await;
    let mut url = reqwest::Url::parse(&db.url).unwrap();
    url.set_path("/onceq_no_such_database");
    let url = url.to_string();
    let errs = tokio::task::spawn_blocking(move || {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().to_str().unwrap();
        [
            failure(&["keys", "list", "--database-url", &url], &[]),
            failure(
                &[
                    "serve",
                    "--listen",
                    "127.0.0.1:0",
                    "--database-url",
                    &url,
                    "--data-dir",
                    data,
                ],
                &[("ONCEQ_API_KEY", "k")],
            ),
        ]
    })
    .await
    .unwrap();
    for err in errs {
        assert_eq!(err.matches("does not exist").count(), 1, "{err}");
        said_once(&err);
    }

    // No server at all: the socket's refusal, once.
    let url = format!(
        "postgres://onceq@127.0.0.1:{}/onceq?connect_timeout=2",
        closed_port()
    );
    let err = failure(&["keys", "list", "--database-url", &url], &[]);
    assert_eq!(err.matches("Connection refused").count(), 1, "{err}");
    said_once(&err);
}

#[test]
fn server_errors_show_code_message_and_hint() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(
        &["--data-dir", dir.path().to_str().unwrap()],
        &[("ONCEQ_API_KEY", "errors-key")],
    );
    let env = [
        ("ONCEQ_URL", server.url.as_str()),
        ("ONCEQ_API_KEY", "errors-key"),
    ];

    // 401: how to pass a key
    let err = failure(
        &["queues", "--api-key", "oq_wrong"],
        &[("ONCEQ_URL", server.url.as_str())],
    );
    assert!(err.starts_with("error: UNAUTHORIZED: "), "{err}");
    assert!(
        err.contains("hint: pass --api-key or set ONCEQ_API_KEY"),
        "{err}"
    );

    // An API error: its code, message and the server's hint, once each.
    let err = failure(&["queue", "create", "jobs", "--max-retries", "5000"], &env);
    assert!(
        err.starts_with("error: INVALID_PARAMS: max_retries must be between 0 and 1000 (got 5000)"),
        "{err}"
    );
    assert!(
        err.contains("\nhint: fix the field the message names"),
        "{err}"
    );
    assert_eq!(err.matches("max_retries").count(), 1, "{err}");
    let err = failure(&["message", "get", "jobs", "qmsg_nope"], &env);
    assert!(
        err.starts_with("error: QUEUE_NOT_FOUND: queue \"jobs\" not found"),
        "{err}"
    );
    assert!(err.contains("hint: create the queue first"), "{err}");
    run(&["queue", "create", "jobs"], &env);
    let err = failure(&["message", "get", "jobs", "qmsg_nope"], &env);
    assert!(err.starts_with("error: MESSAGE_NOT_FOUND: "), "{err}");

    // JSON the user wrote: where it is wrong, without a leading `?:`.
    let err = failure(&["publish", "jobs", r#"{"n": }"#], &env);
    assert_eq!(
        err.lines().next().unwrap(),
        "error: PAYLOAD must be valid JSON: n: expected value at line 1 column 7"
    );
    assert!(err.contains("hint: quote it for your shell"), "{err}");
    let file = dir.path().join("jobs.jsonl");
    std::fs::write(
        &file,
        "{\"n\": 1}\n{\"payload\": {\"n\": 2}, \"priority\": \"high\"}\n",
    )
    .unwrap();
    let err = failure(&["publish", "jobs", "--file", file.to_str().unwrap()], &env);
    assert!(
        err.starts_with(
            "error: line 2: not a valid publish body: priority: invalid type: string \"high\", expected an integer at column 40"
        ),
        "{err}"
    );
    assert!(!err.contains("?:"), "{err}");
    assert!(err.contains("hint: each line is one JSON payload"), "{err}");
}
