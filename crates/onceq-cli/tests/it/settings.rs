//! Configuration that behaves, through the real binary: on/off variables
//! in every spelling, admin commands that never create an empty store,
//! `ONCEQ_API_KEY` changes retiring the old key, the first key in a 0600
//! file, and quiet admin commands.

use std::{
    io::{BufRead, BufReader, Read, Write},
    os::unix::fs::PermissionsExt,
    process::{Child, Stdio},
    time::Duration,
};

use crate::process::{ServerProcess, command, run, run_ok};

/// The status code of `GET <path>` on the server at `url`.
fn status(url: &str, path: &str) -> u16 {
    let addr = url.trim_start_matches("http://");
    let mut conn = std::net::TcpStream::connect(addr).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        conn,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    conn.read_to_string(&mut answer).unwrap();
    answer.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn on_off_variables_take_every_spelling() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    for (value, disabled) in [
        ("1", true),
        ("On", true),
        ("YES", true),
        ("true", true),
        ("0", false),
        ("off", false),
        ("No", false),
        ("FALSE", false),
    ] {
        let server = ServerProcess::start(
            &["--data-dir", data],
            &[
                ("ONCEQ_API_KEY", "k"),
                ("ONCEQ_METRICS_DISABLE", value),
                ("ONCEQ_PUSH_ALLOW_LOOPBACK", value),
                ("ONCEQ_METRICS_PUBLIC", value),
            ],
        );
        let expected = if disabled { 404 } else { 200 };
        assert_eq!(
            status(&server.url, "/metrics"),
            expected,
            "ONCEQ_METRICS_DISABLE={value}"
        );
    }
    // The flag alone still means on.
    let server = ServerProcess::start(
        &["--data-dir", data, "--metrics-disable"],
        &[("ONCEQ_API_KEY", "k")],
    );
    assert_eq!(status(&server.url, "/metrics"), 404);
    drop(server);
    // A bad value names the variable and what it may be, and nothing starts.
    let out = run(
        &["serve", "--listen", "127.0.0.1:0", "--data-dir", data],
        &[("ONCEQ_PUSH_ALLOW_LOOPBACK", "maybe")],
    );
    assert!(!out.status.success());
    let text = stderr(&out);
    assert!(
        text.contains("ONCEQ_PUSH_ALLOW_LOOPBACK") && text.contains("--push-allow-loopback"),
        "{text}"
    );
    assert!(text.contains("1/0, true/false, yes/no or on/off"), "{text}");
    assert!(text.contains("\"maybe\""), "{text}");
}

#[test]
fn admin_commands_refuse_a_missing_or_foreign_sqlite_store() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let m = missing.to_str().unwrap();
    for args in [
        &["keys", "list", "--data-dir", m][..],
        &["keys", "create", "--data-dir", m],
        &["projects", "list", "--data-dir", m],
    ] {
        let out = run(args, &[]);
        assert!(!out.status.success(), "{args:?}");
        let text = stderr(&out);
        assert!(
            text.contains(m) && text.contains("does not exist"),
            "{text}"
        );
        assert!(
            text.contains("run \"onceq serve\" first")
                && text.contains("--data-dir/--database-url"),
            "{text}"
        );
        assert!(out.stdout.is_empty());
    }
    assert!(
        !missing.exists(),
        "an admin command created the data directory"
    );

    // A directory without the file: nothing created in it.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = run(
        &["keys", "list", "--data-dir", empty.to_str().unwrap()],
        &[],
    );
    assert!(!out.status.success());
    assert!(stderr(&out).contains("has no onceq.db"), "{}", stderr(&out));
    assert_eq!(std::fs::read_dir(&empty).unwrap().count(), 0);

    // A file that is not onceq's is left as it was.
    let foreign = dir.path().join("foreign");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("onceq.db"), b"not a database at all").unwrap();
    let out = run(
        &["keys", "list", "--data-dir", foreign.to_str().unwrap()],
        &[],
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("is not a onceq database"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read(foreign.join("onceq.db")).unwrap(),
        b"not a database at all"
    );

    // Once `serve` made it, the commands work, and say nothing on stderr
    // at INFO (no migration lines).
    let store = dir.path().join("store");
    let s = store.to_str().unwrap();
    let server = ServerProcess::start(&["--data-dir", s], &[("ONCEQ_API_KEY", "k")]);
    drop(server);
    let out = command(&["keys", "list", "--data-dir", s], &[])
        .env_remove("ONCEQ_LOG")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    assert!(String::from_utf8_lossy(&out.stdout).contains("from ONCEQ_API_KEY"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_commands_refuse_a_database_without_onceq() {
    let empty = onceq_testdb::fresh_database().await;
    let served = onceq_testdb::fresh_database().await;
    let (empty_url, served_url) = (empty.url.clone(), served.url.clone());
    let name = empty.name.clone();
    tokio::task::spawn_blocking(move || {
        let out = run(&["keys", "list", "--database-url", &empty_url], &[]);
        assert!(!out.status.success());
        let text = stderr(&out);
        assert!(
            text.contains("has no onceq schema") && text.contains("run \"onceq serve\" first"),
            "{text}"
        );
        // Named, without a password.
        assert!(text.contains(&name), "{text}");
        let server = ServerProcess::on_postgres(&served_url, "k", &[]);
        drop(server);
        let out = run_ok(&["keys", "list", "--database-url", &served_url], &[]);
        assert!(out.contains("from ONCEQ_API_KEY"), "{out}");
        // Still empty: the refusal created nothing.
        let out = run(&["projects", "list", "--database-url", &empty_url], &[]);
        assert!(!out.status.success());
    })
    .await
    .unwrap();
    let (client, connection) = tokio_postgres::connect(&empty.url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let tables: i64 = client
        .query_one(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(tables, 0, "the refusal created tables");
}

fn refused(url: &str, key: &str) -> bool {
    let out = run(&["queues"], &[("ONCEQ_URL", url), ("ONCEQ_API_KEY", key)]);
    !out.status.success() && stderr(&out).contains("unknown or revoked API key")
}

#[test]
fn a_changed_onceq_api_key_retires_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let server = ServerProcess::start(&["--data-dir", data], &[("ONCEQ_API_KEY", "key-a")]);
    let env = [
        ("ONCEQ_URL", server.url.as_str()),
        ("ONCEQ_API_KEY", "key-a"),
    ];
    run_ok(&["queues"], &env);
    // A key made by `keys create` is the operator's choice: kept.
    let made = run_ok(
        &["keys", "create", "--project", "shop", "--data-dir", data],
        &[],
    );
    let made = made.trim().to_owned();
    drop(server);

    let server = ServerProcess::start(&["--data-dir", data], &[("ONCEQ_API_KEY", "key-b")]);
    assert!(
        refused(&server.url, "key-a"),
        "the old ONCEQ_API_KEY still works"
    );
    let b = [
        ("ONCEQ_URL", server.url.as_str()),
        ("ONCEQ_API_KEY", "key-b"),
    ];
    run_ok(&["queues"], &b);
    let made_env = [
        ("ONCEQ_URL", server.url.as_str()),
        ("ONCEQ_API_KEY", made.as_str()),
    ];
    run_ok(&["queues"], &made_env);
    // Restarting with the same value changes nothing.
    drop(server);
    let server = ServerProcess::start(&["--data-dir", data], &[("ONCEQ_API_KEY", "key-b")]);
    let b = [
        ("ONCEQ_URL", server.url.as_str()),
        ("ONCEQ_API_KEY", "key-b"),
    ];
    run_ok(&["queues"], &b);
    assert!(refused(&server.url, "key-a"));
    drop(server);
    // Going back to a retired secret is refused, saying why.
    let out = run(
        &["serve", "--listen", "127.0.0.1:0", "--data-dir", data],
        &[("ONCEQ_API_KEY", "key-a")],
    );
    assert!(!out.status.success());
    let text = stderr(&out);
    assert!(
        text.contains("ONCEQ_API_KEY is a key that was revoked")
            && text.contains("set a new value"),
        "{text}"
    );
}

/// `onceq serve <args>` without a key, until it listens: its URL, the line
/// it printed on stdout holding the key, and what it logged before.
fn first_start(args: &[&str]) -> (Child, String, String, String) {
    let mut child = command(
        &[&["serve", "--listen", "127.0.0.1:0"][..], args].concat(),
        &[],
    )
    .env("ONCEQ_LOG", "info")
    .env("NO_COLOR", "1")
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut logs = String::new();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let url = loop {
        let mut line = String::new();
        assert!(
            err.read_line(&mut line).unwrap() > 0,
            "serve ended:\n{logs}"
        );
        logs.push_str(&line);
        if let Some(rest) = line.split("listening on ").nth(1) {
            break rest.split_whitespace().next().unwrap().to_owned();
        }
    };
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let key = loop {
        let mut line = String::new();
        assert!(out.read_line(&mut line).unwrap() > 0, "no key on stdout");
        if line.trim().starts_with("oq_") {
            break line.trim().to_owned();
        }
    };
    (child, url, key, logs)
}

#[test]
fn the_first_key_is_written_to_a_file_only_its_owner_reads() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let (mut child, url, printed, logs) = first_start(&["--data-dir", data]);
    let file = dir.path().join("initial-api-key");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "mode {mode:o}");
    assert_eq!(std::fs::read_to_string(&file).unwrap().trim(), printed);
    assert!(
        logs.contains(file.to_str().unwrap()),
        "the log names the file:\n{logs}"
    );
    assert!(!logs.contains(&printed), "the key was logged:\n{logs}");
    let env = [
        ("ONCEQ_URL", url.as_str()),
        ("ONCEQ_API_KEY", printed.as_str()),
    ];
    run_ok(&["queues"], &env);
    // The operator's key holds the admin API too.
    let keys = run_ok(&["keys", "list", "--url", &url, "--api-key", &printed], &[]);
    assert!(keys.contains("full,accounts"), "{keys}");
    child.kill().unwrap();
    child.wait().unwrap();
}

/// On PostgreSQL the server writes the first key under `--data-dir` only
/// if that directory exists (it uses it for nothing else), and says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_the_first_key_file_needs_an_existing_data_dir() {
    let (one, two) = (
        onceq_testdb::fresh_database().await,
        onceq_testdb::fresh_database().await,
    );
    let (one, two) = (one.url.clone(), two.url.clone());
    tokio::task::spawn_blocking(move || {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().to_str().unwrap();
        let (mut child, _, key, _) = first_start(&["--database-url", &one, "--data-dir", data]);
        let file = dir.path().join("initial-api-key");
        assert_eq!(std::fs::read_to_string(&file).unwrap().trim(), key);
        assert_eq!(
            std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o600
        );
        child.kill().unwrap();
        child.wait().unwrap();

        let missing = dir.path().join("nope");
        let m = missing.to_str().unwrap();
        let (mut child, _, key, logs) = first_start(&["--database-url", &two, "--data-dir", m]);
        assert!(key.starts_with("oq_"));
        assert!(
            !missing.exists(),
            "the server made a directory it does not use"
        );
        assert!(logs.contains("printed on stdout only"), "{logs}");
        child.kill().unwrap();
        child.wait().unwrap();
    })
    .await
    .unwrap();
}

/// The `request threads` line's worker count, from the logs of a server
/// started with `args` and `envs` on an embedded store.
fn request_threads(args: &[&str], envs: &[(&str, &str)]) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let mut all = vec!["--data-dir", dir.path().to_str().unwrap()];
    all.extend_from_slice(args);
    let mut envs = envs.to_vec();
    envs.push(("ONCEQ_API_KEY", "k"));
    let (_, logs) = ServerProcess::start(&all, &envs).terminate();
    let line = logs
        .iter()
        .find(|l| l.contains("request threads"))
        .unwrap_or_else(|| panic!("no `request threads` line in {logs:#?}"));
    line.split("worker_threads=")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn worker_threads_reach_the_runtime() {
    assert_eq!(request_threads(&["--worker-threads", "3"], &[]), 3);
    assert_eq!(request_threads(&[], &[("ONCEQ_WORKER_THREADS", "2")]), 2);
    // auto: the embedded store works on this machine, so half the cores.
    let cores = std::thread::available_parallelism().unwrap().get();
    assert_eq!(request_threads(&[], &[]), (cores / 2).max(1));
    for bad in ["0", "many"] {
        let out = run(&["serve", "--worker-threads", bad], &[]);
        assert!(!out.status.success());
        let err = stderr(&out);
        assert!(
            err.contains("--worker-threads") && err.contains("whole number from 1 up, or auto"),
            "{bad}: {err}"
        );
    }
}
