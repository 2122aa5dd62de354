//! The docs' tables checked against the code, so that a capability, route,
//! error code or metric added without its line in the docs fails here
//! (issue 28): the expected lines are derived from the code's own lists,
//! never copied into this test.
//!
//! - docs/security.md's action table: every keyed capability of
//!   `capability::CAPABILITIES` in its action's row, every `Action`
//!   with a row, the `peek` row naming `SHOWS_PAYLOADS`; and no id in the
//!   table that the code does not have.
//! - docs/api.md's endpoint table: every capability's method, path and
//!   id, and every `capability::ALIASES` route; its 401 list naming every
//!   keyed path group (`/v1/queue/*`, `/v1/cron/*`, …).
//! - docs/api.md's error tables: every `ErrorCode` with its status and
//!   retryable flag, and its hint.
//! - docs/guarantees.md's at-most-once promise and docs/api.md's
//!   Idempotency-Key table: every capability of `idempotency::IDEMPOTENT`.
//! - docs/metrics.md: every family a real server's `/metrics` serves
//!   after a workload touching every series, with its type.
//!
//! The CLI's flags and environment variables are checked by the `onceq`
//! binary's own test (crates/onceq-cli/src/doc_check.rs).

use std::collections::BTreeSet;

use onceq_server::idempotency::IDEMPOTENT;
use onceq_types::{
    ErrorCode,
    capability::{ALIASES, CAPABILITIES, SHOWS_PAYLOADS, UNKEYED},
    scope::Action,
};
use serde_json::json;

use crate::harness::{Backend, TestServer};

fn doc(name: &str) -> String {
    let path = format!("{}/../../docs/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The cells of every table row of `text` (`| a | b |` lines; separator
/// rows dropped).
fn rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(str::trim)
        .filter(|l| l.starts_with('|') && !l.starts_with("|---"))
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_owned())
                .collect()
        })
        .collect()
}

/// The text between heading `from` and the next heading of its level.
fn section<'a>(text: &'a str, from: &str) -> &'a str {
    let start = text
        .find(from)
        .unwrap_or_else(|| panic!("no heading {from:?}"));
    let level = from.chars().take_while(|c| *c == '#').count();
    let rest = &text[start + from.len()..];
    let end = rest
        .lines()
        .scan(0, |at, l| {
            let here = *at;
            *at += l.len() + 1;
            Some((here, l))
        })
        .find(|(_, l)| {
            let hashes = l.chars().take_while(|c| *c == '#').count();
            hashes > 0 && hashes <= level && l.chars().nth(hashes) == Some(' ')
        })
        .map(|(at, _)| at)
        .unwrap_or(rest.len());
    &rest[..end]
}

/// Every `` `text` `` of a cell.
fn ticked(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

#[test]
fn security_md_lists_every_capability_under_its_action() {
    let text = doc("security.md");
    let table = rows(section(&text, "### Scoped keys: actions and queues"));
    let row = |action: Action| -> String {
        let name = format!("`{}`", action.as_str());
        let found: Vec<&Vec<String>> = table.iter().filter(|r| r[0] == name).collect();
        assert_eq!(
            found.len(),
            1,
            "docs/security.md: the action table needs one row for {name}"
        );
        found[0][1..].join(" | ")
    };
    let mut missing = Vec::new();
    for cap in CAPABILITIES.iter().filter(|c| !UNKEYED.contains(c)) {
        if !ticked(&row(cap.action)).contains(&cap.id) {
            missing.push(format!("{} (action {})", cap.id, cap.action.as_str()));
        }
    }
    for cap in SHOWS_PAYLOADS {
        if !ticked(&row(Action::Peek)).contains(&cap.id) {
            missing.push(format!("{} (shows payloads: in the peek row)", cap.id));
        }
    }
    assert!(
        missing.is_empty(),
        "docs/security.md's action table lacks: {missing:?}"
    );
    // Nothing listed that the code does not have, or under another action.
    for action in Action::ALL {
        for id in ticked(&row(action)).into_iter().filter(|t| t.contains('.')) {
            let cap = CAPABILITIES
                .iter()
                .find(|c| c.id == id)
                .unwrap_or_else(|| panic!("docs/security.md lists {id}, which is no capability"));
            assert!(
                cap.action == action || (action == Action::Peek && SHOWS_PAYLOADS.contains(cap)),
                "docs/security.md lists {id} under {}, the code under {}",
                action.as_str(),
                cap.action.as_str()
            );
        }
    }
}

#[test]
fn api_md_lists_every_route() {
    let text = doc("api.md");
    let table = rows(section(&text, "## 3. Endpoints"));
    // (method words, path, capability id) of each row.
    let listed: Vec<(Vec<&str>, &str, &str)> = table
        .iter()
        .filter(|r| r.len() >= 3 && r[0] != "method")
        .map(|r| {
            let methods = r[0].split(" or ").collect();
            let path = ticked(&r[1]).first().copied().unwrap_or("");
            let id = ticked(&r[2]).first().copied().unwrap_or("");
            (methods, path, id)
        })
        .collect();
    let mut missing = Vec::new();
    for cap in CAPABILITIES {
        let found = listed
            .iter()
            .any(|(m, p, id)| m.contains(&cap.method) && *p == cap.path && *id == cap.id);
        if !found {
            missing.push(format!("{} {} ({})", cap.method, cap.path, cap.id));
        }
    }
    for (method, path) in ALIASES {
        if !listed
            .iter()
            .any(|(m, p, _)| m.contains(method) && p == path)
        {
            missing.push(format!("{method} {path} (alias)"));
        }
    }
    assert!(
        missing.is_empty(),
        "docs/api.md's endpoint table lacks: {missing:?}"
    );
    // Every keyed path group is in the 401 list.
    let errors = rows(section(&text, "## 2."));
    let unauthorized = errors
        .iter()
        .find(|r| r[0] == "`UNAUTHORIZED`" && r.len() == 4)
        .expect("UNAUTHORIZED row")
        .join(" | ");
    let groups: BTreeSet<String> = CAPABILITIES
        .iter()
        .filter(|c| !UNKEYED.contains(c))
        .map(|c| {
            format!(
                "/{}/*",
                c.path.split('/').take(3).collect::<Vec<_>>()[1..].join("/")
            )
        })
        .collect();
    for g in groups {
        assert!(
            unauthorized.contains(&format!("`{g}`")),
            "docs/api.md: the UNAUTHORIZED row names no `{g}` calls"
        );
    }
}

#[test]
fn api_md_lists_every_error_code() {
    let text = doc("api.md");
    let table = rows(section(&text, "## 2."));
    for code in ErrorCode::ALL {
        let name = format!("`{}`", code.as_str());
        let row = table
            .iter()
            .find(|r| r.len() == 4 && r[0] == name)
            .unwrap_or_else(|| panic!("docs/api.md's error table has no row for {name}"));
        assert_eq!(
            row[1],
            code.http_status().to_string(),
            "docs/api.md: status of {name}"
        );
        assert_eq!(
            row[2],
            code.retryable().to_string(),
            "docs/api.md: retryable of {name}"
        );
        let hint = table
            .iter()
            .find(|r| r.len() == 2 && ticked(&r[0]).contains(&code.as_str()))
            .unwrap_or_else(|| panic!("docs/api.md's hint table has no row for {name}"));
        match code.hint() {
            Some(h) => assert_eq!(hint[1], h, "docs/api.md: hint of {name}"),
            None => assert_eq!(hint[1], "`null`", "docs/api.md: hint of {name}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_md_lists_every_series() {
    let s = TestServer::start(Backend::Sqlite).await;
    // A workload reaching every series: publish, replay, consume, ack,
    // nack with an error, a dead letter, a lease expiry, a paused queue.
    s.post(
        "/v1/queue/create",
        json!({"name": "jobs", "max_retries": 1}),
    )
    .await
    .ok();
    let keyed = json!({"queue": "jobs", "payload": 1, "idempotency_key": "k"});
    s.post("/v1/queue/publish", keyed.clone()).await.ok();
    s.post("/v1/queue/publish", keyed).await.ok();
    s.publish("jobs", json!(2)).await;
    s.publish("jobs", json!(3)).await;
    let got = s
        .post(
            "/v1/queue/consume",
            json!({"queue": "jobs", "max_messages": 3}),
        )
        .await;
    let items = got.ok().data()["items"].as_array().unwrap().clone();
    assert_eq!(items.len(), 3);
    let lease = |i: usize| json!({"queue": "jobs", "message_id": items[i]["message_id"], "receipt": items[i]["receipt"]});
    s.post("/v1/queue/ack", lease(0)).await.ok();
    let mut nack = lease(1);
    nack["error"] = json!("boom");
    nack["requeue"] = json!(false);
    s.post("/v1/queue/nack", nack).await.ok();
    s.expire_leases_after(3600).await;
    s.post("/v1/queue/pause/jobs", json!({})).await.ok();
    let scrape = s.scrape().await;
    let families: Vec<(&str, &str)> = scrape
        .text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .map(|l| l.split_once(' ').expect("# TYPE name kind"))
        .collect();
    assert!(families.len() > 20, "{}", scrape.text);
    let text = doc("metrics.md");
    let table = rows(section(&text, "## Series"));
    let mut missing = Vec::new();
    for (name, kind) in families {
        let ok = table
            .iter()
            .any(|r| r.len() >= 2 && r[0] == format!("`{name}`") && r[1] == kind);
        if !ok {
            missing.push(format!("{name} ({kind})"));
        }
    }
    assert!(
        missing.is_empty(),
        "docs/metrics.md's series tables lack: {missing:?}"
    );
}

#[test]
fn guarantees_and_api_md_list_every_idempotent_call() {
    let guarantees = doc("guarantees.md");
    let promise = section(
        &guarantees,
        "**A mutating call with an `Idempotency-Key` is carried out at most once",
    )
    .split("\n\n")
    .next()
    .unwrap();
    let api = doc("api.md");
    let routes = rows(section(&api, "### Idempotency-Key on mutating calls"));
    let mut missing = Vec::new();
    for cap in IDEMPOTENT {
        if !ticked(promise).contains(&cap.id) {
            missing.push(format!("docs/guarantees.md: {}", cap.id));
        }
        // `/v1/cron/pause/{job_id}` or its row's shorthand without the
        // method: the path must be there.
        if !routes.iter().any(|r| r[0].contains(cap.path)) {
            missing.push(format!("docs/api.md's Idempotency-Key table: {}", cap.path));
        }
    }
    assert!(missing.is_empty(), "{missing:#?}");
}
