//! The long operations (`publish --file`, `dlq redrive`, `purge`) and
//! `stats --watch` with no terminal attached, as in scripts and CI: results
//! on stdout, not a byte of progress drawing on stderr, no question asked.

use std::process::Output;

use serde_json::Value;

use crate::process::{Running, ServerProcess, run, run_ok, run_with_stdin};

const KEY: &str = "long-ops-key";

struct Env {
    server: ServerProcess,
    _dir: tempfile::TempDir,
}

impl Env {
    fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let server = ServerProcess::start(
            &["--data-dir", data.to_str().unwrap()],
            &[("ONCEQ_API_KEY", KEY)],
        );
        Self { server, _dir: dir }
    }

    fn vars(&self) -> [(&str, &str); 2] {
        [
            ("ONCEQ_URL", self.server.url.as_str()),
            ("ONCEQ_API_KEY", KEY),
        ]
    }

    fn ok(&self, args: &[&str]) -> String {
        run_ok(args, &self.vars())
    }

    fn run(&self, args: &[&str]) -> Output {
        run(args, &self.vars())
    }

    fn stats(&self, queue: &str) -> Value {
        serde_json::from_str(&self.ok(&["stats", queue, "--json"])).unwrap()
    }

    /// Consumes every message of `queue` and nacks each without requeue:
    /// they all land in its dead-letter queue.
    fn dead_letter_all(&self, queue: &str) {
        let client = onceq::Client::new(&self.server.url, KEY).unwrap();
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            loop {
                let opts = onceq::ConsumeOptions {
                    max_messages: 10,
                    ..Default::default()
                };
                let got = client.consume(queue, opts).await.unwrap();
                if got.is_empty() {
                    break;
                }
                for m in got {
                    let nack = onceq::NackOptions {
                        receipt: Some(m.receipt),
                        requeue: false,
                        delay_seconds: None,
                        error: None,
                    };
                    assert!(
                        client
                            .nack(queue, &m.message_id, nack)
                            .await
                            .unwrap()
                            .dead_lettered
                    );
                }
            }
        });
    }

    /// How many requests `/metrics` says a route answered with 2xx.
    fn route_calls(&self, route: &str, method: &str) -> f64 {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let text = rt.block_on(async {
            reqwest::get(format!("{}/metrics", self.server.url))
                .await
                .unwrap()
                .text()
                .await
                .unwrap()
        });
        let prefix = "onceq_http_requests_total{";
        text.lines()
            .filter(|l| l.starts_with(prefix))
            .find(|l| {
                l.contains(&format!("route=\"{route}\""))
                    && l.contains(&format!("method=\"{method}\""))
                    && l.contains("status=\"2xx\"")
            })
            .map_or(0.0, |l| l.rsplit(' ').next().unwrap().parse().unwrap())
    }
}

/// Nothing a progress bar or spinner would draw.
#[track_caller]
fn quiet(out: &Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.is_empty(),
        "stderr is not a terminal, yet something was drawn: {stderr:?}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !stdout.contains('\r') && !stdout.contains('\x1b'),
        "{stdout:?}"
    );
}

#[test]
fn publish_file_sends_every_line_in_batches_quietly() {
    let env = Env::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("jobs.jsonl");
    let mut lines: Vec<String> = (0..22).map(|n| format!("{{\"n\": {n}}}")).collect();
    lines.push(String::new()); // blank lines are skipped
    lines.push(r#"{"payload": {"n": 22}, "idempotency_key": "job-22", "priority": 5}"#.into());
    lines
        .push(r#"{"payload": "later", "delay_seconds": 3600, "idempotency_key": "job-23"}"#.into());
    lines.push(r#""a plain string""#.into());
    std::fs::write(&file, lines.join("\n")).unwrap();
    let path = file.to_str().unwrap();

    let out = env.run(&["publish", "bulk", "--file", path]);
    assert!(out.status.success(), "{out:?}");
    quiet(&out);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "published 25 message(s) to bulk (0 replayed)\n"
    );
    let s = env.stats("bulk");
    assert_eq!(
        (s["message_count"].as_i64(), s["delayed"].as_i64()),
        (Some(25), Some(1))
    );
    // 25 lines, ten per request
    assert_eq!(env.route_calls("/v1/queue/publish_batch", "POST"), 3.0);

    // Again: the lines with their own keys are replays, the rest are new.
    let out = env.run(&["publish", "bulk", "--file", path, "--json"]);
    quiet(&out);
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        answer,
        serde_json::json!({"queue": "bulk", "published": 23, "replayed": 2})
    );

    // From stdin, with defaults for lines that set none.
    let out = run_with_stdin(
        &["publish", "piped", "--file", "-", "--delay", "60"],
        &env.vars(),
        "1\n2\n{\"payload\": 3, \"delay_seconds\": 0}\n",
    );
    assert!(out.status.success(), "{out:?}");
    quiet(&out);
    let s = env.stats("piped");
    assert_eq!(
        (s["available"].as_i64(), s["delayed"].as_i64()),
        (Some(1), Some(2))
    );

    // A bad line is named and nothing at all is published.
    std::fs::write(&file, "{\"n\": 1}\n{\"n\": 2}\n{oops\n").unwrap();
    let out = env.run(&["publish", "strict", "--file", path]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("line 3") && err.contains("not valid JSON"),
        "{err}"
    );
    let out = env.run(&["stats", "strict"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("not found"));
}

#[test]
fn dlq_redrive_moves_in_chunks_quietly() {
    let env = Env::start();
    let jobs: String = (0..25).map(|n| format!("{n}\n")).collect();
    let out = run_with_stdin(&["publish", "jobs", "--file", "-"], &env.vars(), &jobs);
    assert!(out.status.success(), "{out:?}");
    env.dead_letter_all("jobs");
    assert_eq!(env.stats("jobs")["dead_lettered"], 25);

    let out = env.run(&["dlq", "redrive", "jobs", "--max", "12", "--chunk", "10"]);
    assert!(out.status.success(), "{out:?}");
    quiet(&out);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "moved 12 message(s) from jobs-dlq back to jobs\n"
    );
    let out = env.run(&["dlq", "redrive", "jobs", "--chunk", "10", "--json"]);
    quiet(&out);
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        answer,
        serde_json::json!({"queue": "jobs", "dead_letter_queue": "jobs-dlq", "redriven": 13})
    );
    let s = env.stats("jobs");
    assert_eq!(
        (s["available"].as_i64(), s["dead_lettered"].as_i64()),
        (Some(25), Some(0))
    );
    // 12 = 10 + 2, then 13 = 10 + 3: four requests
    assert_eq!(
        env.route_calls("/v1/queue/dlq/redrive/{queue}", "POST"),
        4.0
    );

    // Nothing to move: no request, an answer all the same.
    assert_eq!(
        env.ok(&["dlq", "redrive", "jobs"]),
        "moved 0 message(s) from jobs-dlq back to jobs\n"
    );
    let out = env.run(&["dlq", "redrive", "jobs-dlq"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no dead-letter queue"));
}

#[test]
fn purge_asks_for_yes_when_it_cannot_ask() {
    let env = Env::start();
    for n in 0..3 {
        env.ok(&["publish", "doomed", &n.to_string()]);
    }
    // stdin is not a terminal: no question, a refusal, nothing deleted
    let out = env.run(&["purge", "doomed"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--yes") && err.contains("not a terminal"),
        "{err}"
    );
    assert_eq!(env.stats("doomed")["message_count"], 3);

    let out = env.run(&["purge", "doomed", "--yes"]);
    assert!(out.status.success(), "{out:?}");
    quiet(&out);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "purged 3 message(s) from doomed\n"
    );
    assert_eq!(env.stats("doomed")["message_count"], 0);
    let answer: Value =
        serde_json::from_str(&env.ok(&["purge", "doomed", "-y", "--json"])).unwrap();
    assert_eq!(answer, serde_json::json!({"queue": "doomed", "purged": 0}));
    let out = env.run(&["purge", "missing", "--yes"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("not found"));
}

#[test]
fn stats_watch_appends_refreshes_in_a_pipe() {
    let env = Env::start();
    env.ok(&["publish", "watched", "1"]);

    let json = Running::spawn(
        &["stats", "watched", "--watch", "--interval", "0.1", "--json"],
        &env.vars(),
    );
    let first: Value = serde_json::from_str(&json.next_line()).unwrap();
    assert_eq!(
        (first["queue"].as_str(), first["available"].as_i64()),
        (Some("watched"), Some(1))
    );
    env.ok(&["publish", "watched", "2"]);
    // each refresh is one JSON object per line; one of the next shows it
    let mut seen = Vec::new();
    let grown = loop {
        let line = json.next_line();
        let s: Value = serde_json::from_str(&line).unwrap();
        seen.push(line);
        if s["available"] == 2 {
            break true;
        }
        if seen.len() > 200 {
            break false;
        }
    };
    assert!(grown, "the watch never showed the second message: {seen:?}");

    let text = Running::spawn(
        &["stats", "watched", "--watch", "--interval", "0.1"],
        &env.vars(),
    );
    let mut blocks = vec![Vec::new()];
    while blocks.len() < 3 {
        let line = text.next_line();
        assert!(
            !line.contains('\x1b'),
            "no cursor movement in a pipe: {line:?}"
        );
        if line.is_empty() {
            blocks.push(Vec::new());
        } else {
            blocks.last_mut().unwrap().push(line);
        }
    }
    for block in &blocks[..2] {
        assert!(block[0].starts_with("watched at "), "{block:?}");
        assert!(
            block
                .iter()
                .any(|l| l.starts_with("available") && l.ends_with(" 2")),
            "{block:?}"
        );
    }

    let out = env.run(&["stats", "watched", "--interval", "1"]);
    assert!(!out.status.success(), "--interval needs --watch");
    let out = env.run(&["stats", "watched", "--watch", "--interval", "0"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("0.1"));
}
