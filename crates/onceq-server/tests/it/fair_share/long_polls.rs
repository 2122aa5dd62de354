//! Long polls: a fleet of 1 000 workers long-polling one queue is served
//! while another project's calls answer normally; parked polls filling the
//! server do not lock another project out (the longest-parked is cut short
//! for a new connection); the per-key and per-project caps refuse with 429
//! and `Retry-After`, and `wait_seconds: 0` is never refused.
//!
//! Bounds (generous, not speed measurements): each of the victim's calls
//! answers within [`VICTIM_BOUND`]; the fleet receives every message within
//! [`FLEET_BOUND`] of the last publish.

use std::{
    collections::HashSet,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use onceq_server::ServerConfig;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::{
    both,
    harness::{Backend, TestServer},
};

both!(a_fleet_of_1000_long_polling_workers_is_served_beside_another_project);
both!(parked_long_polls_filling_the_server_lock_no_project_out);
both!(waiting_long_polls_are_capped_per_key_and_per_project);

/// The longest one of the victim's calls may take.
/// (Generous: a debug build on a shared 2-core machine, with the whole
/// fleet's claims queued for the same store while it is fed.)
const VICTIM_BOUND: Duration = Duration::from_secs(5);
/// The longest the fleet may take to receive every message.
const FLEET_BOUND: Duration = Duration::from_secs(30);
const FLEET: usize = 1000;

/// Behind a reverse proxy every connection comes from one address, so the
/// docs say `--max-connections-per-ip 0`: the case the issue measured.
fn behind_a_proxy() -> ServerConfig {
    ServerConfig {
        max_connections_per_ip: 0,
        ..ServerConfig::default()
    }
}

/// Waits until `n` long polls are parked on the server.
async fn until_waiting(s: &TestServer, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while s.state.long_polls.waiting() < n {
        assert!(
            Instant::now() < deadline,
            "only {} of {n} long polls waiting",
            s.state.long_polls.waiting()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The victim (project beta) publishes, consumes and reads stats `rounds`
/// times; the slowest call's latency. Every call must answer 200.
async fn victim_calls(s: &TestServer, rounds: usize) -> Duration {
    let mut slowest = Duration::ZERO;
    for i in 0..rounds {
        for (path, body) in [
            (
                "/v1/queue/publish",
                Some(json!({"queue": "victim", "payload": {"i": i}})),
            ),
            (
                "/v1/queue/consume",
                Some(json!({"queue": "victim", "max_messages": 1})),
            ),
            ("/v1/queue/stats/victim", None),
        ] {
            let started = Instant::now();
            let r = match body {
                Some(body) => s.post_as(&s.other_key, path, body).await,
                None => s.get_as(&s.other_key, path).await,
            };
            slowest = slowest.max(started.elapsed());
            r.ok();
        }
    }
    slowest
}

async fn a_fleet_of_1000_long_polling_workers_is_served_beside_another_project(b: Backend) {
    let s = Arc::new(TestServer::start_with(b, behind_a_proxy()).await);
    s.post("/v1/queue/create", json!({"name": "jobs"}))
        .await
        .ok();
    s.post_as(&s.other_key, "/v1/queue/create", json!({"name": "victim"}))
        .await
        .ok();
    let received = Arc::new(Mutex::new(HashSet::new()));
    let workers: Vec<_> = (0..FLEET)
        .map(|_| {
            let (s, received) = (s.clone(), received.clone());
            tokio::spawn(async move {
                loop {
                    let r = s
                        .post(
                            "/v1/queue/consume",
                            json!({"queue": "jobs", "max_messages": 1, "wait_seconds": 20, "visibility_timeout": 300}),
                        )
                        .await;
                    r.ok();
                    for m in r.data()["items"].as_array().unwrap() {
                        let id = m["message_id"].as_str().unwrap().to_owned();
                        received.lock().unwrap().insert(id);
                    }
                }
            })
        })
        .collect();
    until_waiting(&s, FLEET).await;
    // The victim while the whole fleet waits, then while it is fed.
    let idle_fleet = victim_calls(&s, 10).await;
    for batch in 0..FLEET / 10 {
        let messages: Vec<_> = (0..10)
            .map(|i| json!({"payload": {"n": batch * 10 + i}}))
            .collect();
        s.publish_batch("jobs", &messages).await;
    }
    let published = Instant::now();
    let busy_fleet = victim_calls(&s, 10).await;
    while received.lock().unwrap().len() < FLEET {
        assert!(
            published.elapsed() < FLEET_BOUND,
            "the fleet received {} of {FLEET} messages",
            received.lock().unwrap().len()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let fleet_took = published.elapsed();
    for w in &workers {
        w.abort();
    }
    eprintln!(
        "fair_share long polls ({b:?}): {FLEET} workers waiting; victim's slowest call {idle_fleet:?} (fleet waiting), {busy_fleet:?} (fleet fed); the fleet received all {FLEET} messages {fleet_took:?} after the last publish"
    );
    assert!(
        idle_fleet.max(busy_fleet) < VICTIM_BOUND,
        "victim's slowest call: {idle_fleet:?} / {busy_fleet:?}"
    );
}

/// One request on a new connection from 127.0.0.1 (closed after it):
/// whether it was answered 200 within the bound.
async fn served_once(s: &TestServer, key: &str) -> bool {
    let request = format!(
        "GET /v1/queue/stats/victim HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\nConnection: close\r\n\r\n"
    );
    let attempt = async {
        let mut conn = tokio::net::TcpStream::connect(s.addr).await.ok()?;
        conn.write_all(request.as_bytes()).await.ok()?;
        let mut answer = Vec::new();
        conn.read_to_end(&mut answer).await.ok()?;
        Some(answer.starts_with(b"HTTP/1.1 200"))
    };
    matches!(
        tokio::time::timeout(VICTIM_BOUND, attempt).await,
        Ok(Some(true))
    )
}

async fn parked_long_polls_filling_the_server_lock_no_project_out(b: Backend) {
    // A small server: 64 connections, all of them taken by one project's
    // long polls (as 1 024 polls took a 1 024-connection server).
    let config = ServerConfig {
        max_connections: 64,
        ..behind_a_proxy()
    };
    let s = Arc::new(TestServer::start_with(b, config).await);
    s.post("/v1/queue/create", json!({"name": "idle"}))
        .await
        .ok();
    s.post_as(&s.other_key, "/v1/queue/create", json!({"name": "victim"}))
        .await
        .ok();
    // The hostile polls again as soon as it is answered, whatever the answer.
    let hostile: Vec<_> = (0..64)
        .map(|_| {
            let s = s.clone();
            tokio::spawn(async move {
                loop {
                    let _ = s
                        .http
                        .post(s.url("/v1/queue/consume"))
                        .bearer_auth(&s.key)
                        .json(&json!({"queue": "idle", "wait_seconds": 20}))
                        .send()
                        .await;
                }
            })
        })
        .collect();
    until_waiting(&s, 64).await;
    let mut ok = 0;
    for _ in 0..20 {
        ok += usize::from(served_once(&s, &s.other_key).await);
    }
    let cut = s.state.connections.cut();
    for h in &hostile {
        h.abort();
    }
    eprintln!(
        "fair_share parked polls ({b:?}): 64 parked polls on a 64-connection server; the other project got {ok} of 20 calls answered within {VICTIM_BOUND:?}; {cut} polls cut short"
    );
    assert_eq!(
        ok, 20,
        "only {ok} of 20 of the other project's calls served"
    );
    assert!(cut >= 20, "each new connection cut a parked poll ({cut})");
}

async fn waiting_long_polls_are_capped_per_key_and_per_project(b: Backend) {
    let config = ServerConfig {
        long_poll_max_per_key: 3,
        long_poll_max_per_project: 5,
        ..ServerConfig::default()
    };
    let s = Arc::new(TestServer::start_with(b, config).await);
    s.post("/v1/queue/create", json!({"name": "q"})).await.ok();
    s.post_as(&s.other_key, "/v1/queue/create", json!({"name": "q"}))
        .await
        .ok();
    let second = s.scoped_key("alpha", "full", "*").await;
    let wait = json!({"queue": "q", "wait_seconds": 20});
    let park = |key: String| {
        let (s, wait) = (s.clone(), wait.clone());
        tokio::spawn(async move { s.post_as(&key, "/v1/queue/consume", wait).await })
    };
    let mut parked: Vec<_> = (0..3).map(|_| park(s.key.clone())).collect();
    until_waiting(&s, 3).await;
    let refused = s.post("/v1/queue/consume", wait.clone()).await;
    assert_eq!(refused.status, 429, "{:?}", refused.body);
    assert_eq!(refused.body["error"]["code"], "RATE_LIMITED");
    assert_eq!(refused.headers["retry-after"], "1");
    let message = refused.body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("this API key") && message.contains('3'),
        "{message}"
    );
    // Not waiting: never refused by the cap.
    s.post("/v1/queue/consume", json!({"queue": "q"}))
        .await
        .ok();
    // Another key of the project: two more, then the project's cap.
    parked.extend((0..2).map(|_| park(second.clone())));
    until_waiting(&s, 5).await;
    let refused = s.post_as(&second, "/v1/queue/consume", wait.clone()).await;
    assert_eq!(refused.status, 429, "{:?}", refused.body);
    assert!(
        refused.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("this project")
    );
    // Another project is not counted against them.
    let other = park(s.other_key.clone());
    until_waiting(&s, 6).await;
    // A place freed is taken again: a message ends one wait.
    s.publish("q", json!({"wake": 1})).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while s.state.long_polls.waiting() > 5 {
        assert!(Instant::now() < deadline, "no wait ended");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let again = park(second.clone());
    until_waiting(&s, 6).await;
    for h in parked.iter().chain([&other, &again]) {
        h.abort();
    }
    let refused = s.state.long_polls.refused();
    assert_eq!(
        refused.map(|(_, n)| n),
        [1, 1],
        "one refusal per cap: {refused:?}"
    );
}
