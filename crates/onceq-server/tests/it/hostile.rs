//! Nasty input over real HTTP: each is answered with a 4xx or a closed
//! connection, the server keeps serving others, and nothing is stored.

use std::time::Duration;

use onceq_server::ServerConfig;
use serde_json::json;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

use crate::{
    both,
    harness::{Backend, TestServer},
};

/// Reads until the server closes the connection (or resets it), within a
/// generous deadline: the server's own timeouts are what is under test.
async fn read_to_close(conn: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(20), async {
        let mut buf = [0u8; 4096];
        loop {
            match conn.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
            }
        }
    });
    read.await.expect("the server never closed the connection");
    String::from_utf8_lossy(&out).into_owned()
}

/// Sends raw bytes on a new connection and returns all the server said.
async fn raw(s: &TestServer, bytes: &[u8]) -> String {
    let mut conn = TcpStream::connect(s.addr).await.unwrap();
    conn.write_all(bytes).await.unwrap();
    read_to_close(&mut conn).await
}

fn request(s: &TestServer, path: &str, extra_headers: &str, body: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nConnection: close\r\n{extra_headers}Content-Length: {}\r\n\r\n",
        s.key,
        body.len()
    )
    .into_bytes();
    r.extend_from_slice(body);
    r
}

/// Asserts nothing was stored: alpha has no queue at all.
async fn nothing_stored(s: &TestServer) {
    let r = s.get("/v1/queue/list").await;
    assert_eq!(r.data()["items"], json!([]), "something was stored");
}

async fn nasty_bodies_are_4xx_and_store_nothing(b: Backend) {
    let s = TestServer::start(b).await;
    let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    let long_key = "k".repeat(10_000);
    let cases: Vec<(&str, Vec<u8>, u16)> = vec![
        (
            "deeply nested payload",
            format!(r#"{{"queue":"q","payload":{}}}"#, deep(100_000)).into_bytes(),
            400,
        ),
        (
            "deeply nested field",
            format!(r#"{{"queue":{},"payload":1}}"#, deep(100_000)).into_bytes(),
            400,
        ),
        (
            "payload nested past 128",
            format!(r#"{{"queue":"q","payload":{}}}"#, deep(200)).into_bytes(),
            400,
        ),
        (
            "huge delay",
            br#"{"queue":"q","payload":1,"delay_seconds":1e400}"#.to_vec(),
            400,
        ),
        (
            "huge priority",
            br#"{"queue":"q","payload":1,"priority":123456789012345678901234567890}"#.to_vec(),
            400,
        ),
        (
            "huge number in payload",
            br#"{"queue":"q","payload":{"n":1e400}}"#.to_vec(),
            400,
        ),
        (
            "NUL in the queue name",
            br#"{"queue":"a\u0000b","payload":1}"#.to_vec(),
            400,
        ),
        (
            "raw NUL in the queue name",
            b"{\"queue\":\"a\0b\",\"payload\":1}".to_vec(),
            400,
        ),
        (
            "invalid UTF-8 in the queue name",
            b"{\"queue\":\"a\xff\",\"payload\":1}".to_vec(),
            400,
        ),
        (
            "invalid UTF-8 in the payload",
            b"{\"queue\":\"q\",\"payload\":\"\xc3\x28\"}".to_vec(),
            400,
        ),
        (
            "lone surrogate in the payload",
            br#"{"queue":"q","payload":"\ud800"}"#.to_vec(),
            400,
        ),
        (
            "10 000-character idempotency key",
            format!(r#"{{"queue":"q","payload":1,"idempotency_key":"{long_key}"}}"#).into_bytes(),
            400,
        ),
        (
            "control character in the idempotency key",
            br#"{"queue":"q","payload":1,"idempotency_key":"a\nb"}"#.to_vec(),
            400,
        ),
        (
            "duplicate field",
            br#"{"queue":"q","queue":"r","payload":1}"#.to_vec(),
            400,
        ),
        (
            "duplicate key in the payload",
            br#"{"queue":"q","payload":{"a":1,"a":2}}"#.to_vec(),
            400,
        ),
        (
            "10 000-character queue name",
            format!(r#"{{"queue":"{}","payload":1}}"#, "q".repeat(10_000)).into_bytes(),
            400,
        ),
        ("not an object", b"[1,2,3]".to_vec(), 400),
        ("a bare string", br#""queue""#.to_vec(), 400),
        ("truncated", br#"{"queue":"q","payload":"#.to_vec(), 400),
        (
            "trailing garbage",
            br#"{"queue":"q","payload":1} x"#.to_vec(),
            400,
        ),
    ];
    for (what, body, status) in cases {
        let r = s.post_raw("/v1/queue/publish", body.clone()).await;
        assert_eq!(r.status, status, "{what}: {}", r.body);
        assert_eq!(r.body["ok"], false, "{what}");
        // the batch endpoint, with the same thing as its one message
        if let Ok(text) = std::str::from_utf8(&body) {
            // (not when the rest names the queue again: an unknown field
            // of a batch item is ignored)
            let rest = text
                .strip_prefix(r#"{"queue":"q","#)
                .filter(|r| !r.contains(r#""queue""#));
            if let Some(rest) = rest {
                let batch = format!(r#"{{"queue":"q","messages":[{{{rest}]}}"#);
                let r = s.post_raw("/v1/queue/publish_batch", batch).await;
                assert!((400..500).contains(&r.status), "batch {what}: {}", r.body);
            }
        }
    }
    // the Idempotency-Key header, 10 000 characters long
    let r = s
        .http
        .post(s.url("/v1/queue/publish"))
        .bearer_auth(&s.key)
        .header("idempotency-key", &long_key)
        .json(&json!({"queue": "q", "payload": 1}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    // other endpoints
    for (path, body) in [
        (
            "/v1/queue/consume",
            format!(r#"{{"queue":"q","max_messages":{}}}"#, "9".repeat(400)),
        ),
        (
            "/v1/queue/ack",
            format!(r#"{{"queue":"q","message_id":"{long_key}"}}"#),
        ),
        (
            "/v1/queue/create",
            r#"{"name":"q","max_retries":1e400}"#.to_owned(),
        ),
        (
            "/v1/queue/extend",
            r#"{"queue":"q","message_id":"m","visibility_timeout":-1}"#.to_owned(),
        ),
        (
            "/v1/queue/nack",
            r#"{"queue":"q","message_id":"m","requeue":"yes"}"#.to_owned(),
        ),
        (
            "/v1/queue/dlq/redrive/q",
            r#"{"max_messages":0}"#.to_owned(),
        ),
    ] {
        let r = s.post_raw(path, body).await;
        assert_eq!(r.status, 400, "{path}: {}", r.body);
    }
    // NUL and invalid UTF-8 in paths
    for path in [
        "/v1/queue/stats/a%00b",
        "/v1/queue/stats/%FF",
        "/v1/queue/get/a%0Ab",
    ] {
        s.get(path).await.err(400, "INVALID_PARAMS");
    }
    nothing_stored(&s).await;
    // the server still serves
    s.publish("fine", json!({"ok": true})).await;
}
both!(nasty_bodies_are_4xx_and_store_nothing);

async fn nasty_keys_are_401_or_refused(b: Backend) {
    let s = TestServer::start(b).await;
    let body = br#"{"queue":"q","payload":1}"#;
    let cases: Vec<Vec<u8>> = vec![
        b"Bearer \xff\xfe".to_vec(),
        b"Bearer oq_\x00_nul".to_vec(),
        format!("Bearer {}", "k".repeat(10_000)).into_bytes(),
        b"Bearer ".to_vec(),
        b"Basic abc".to_vec(),
    ];
    for auth in cases {
        let mut r =
            b"POST /v1/queue/publish HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: "
                .to_vec();
        r.extend_from_slice(&auth);
        r.extend_from_slice(format!("\r\nContent-Length: {}\r\n\r\n", body.len()).as_bytes());
        r.extend_from_slice(body);
        let answer = raw(&s, &r).await;
        let status = answer.split(' ').nth(1).unwrap_or("closed");
        assert!(
            status == "closed" || status.starts_with('4'),
            "{:?}: {answer}",
            String::from_utf8_lossy(&auth)
        );
    }
    nothing_stored(&s).await;
}
both!(nasty_keys_are_401_or_refused);

fn strict_timeouts() -> ServerConfig {
    ServerConfig {
        header_read_timeout: Duration::from_millis(300),
        body_read_timeout: Duration::from_millis(300),
        ..ServerConfig::default()
    }
}

async fn slow_loris_headers_and_bodies_are_cut_off(b: Backend) {
    let s = TestServer::start_with(b, strict_timeouts()).await;
    // headers that never end
    let mut slow_headers = TcpStream::connect(s.addr).await.unwrap();
    slow_headers
        .write_all(b"POST /v1/queue/publish HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    // a body that never comes
    let mut slow_body = TcpStream::connect(s.addr).await.unwrap();
    let mut req = request(&s, "/v1/queue/publish", "", &[b' '; 100]);
    req.truncate(req.len() - 90);
    slow_body.write_all(&req).await.unwrap();
    // a connection that says nothing at all
    let mut silent = TcpStream::connect(s.addr).await.unwrap();

    // meanwhile others are served
    s.get("/v1/queue/list").await.ok();

    let answer = read_to_close(&mut slow_headers).await;
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
        "{answer}"
    );
    let answer = read_to_close(&mut slow_body).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("REQUEST_TIMEOUT"), "{answer}");
    let answer = read_to_close(&mut silent).await;
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
        "{answer}"
    );

    nothing_stored(&s).await;
    s.publish("fine", json!(1)).await;
}
both!(slow_loris_headers_and_bodies_are_cut_off);

async fn connections_past_the_limit_shed_idle_ones_or_are_closed(b: Backend) {
    let config = ServerConfig {
        max_connections: 4,
        ..ServerConfig::default()
    };
    let s = TestServer::start_with(b, config).await;
    s.publish("waits", json!(1)).await;
    s.post("/v1/queue/consume", json!({"queue": "waits"}))
        .await
        .ok();
    // Four connections parked in a long poll each: a fifth gets in, the
    // poll parked longest cut short (answered empty, connection closed).
    let poll = format!(
        "POST /v1/queue/consume HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 34\r\n\r\n{{\"queue\":\"waits\",\"wait_seconds\":2}}",
        s.key
    );
    assert_eq!(poll.split("\r\n\r\n").nth(1).unwrap().len(), 34);
    let mut parked = Vec::new();
    for _ in 0..4 {
        let mut conn = TcpStream::connect(s.addr).await.unwrap();
        conn.write_all(poll.as_bytes()).await.unwrap();
        parked.push(conn);
    }
    // Let the server read them (loopback: well under this).
    tokio::time::sleep(Duration::from_millis(300)).await;
    let healthz = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    let answer = raw(&s, healthz).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(s.state.connections.cut() >= 1, "a parked poll was cut");
    // Every long poll still gets its answer (the cut one at once, empty).
    for conn in &mut parked {
        let answer = read_to_close(conn).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.contains(r#""items":[]"#), "{answer}");
    }
    drop(parked);

    // Four connections busy with real work (a body still being sent):
    // the fifth is closed without an answer.
    let headers_only = poll.split("\r\n\r\n").next().unwrap().to_owned() + "\r\n\r\n";
    let mut busy = Vec::new();
    for _ in 0..4 {
        let mut conn = TcpStream::connect(s.addr).await.unwrap();
        conn.write_all(headers_only.as_bytes()).await.unwrap();
        busy.push(conn);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let answer = raw(&s, healthz).await;
    assert!(answer.is_empty(), "{answer}");
    drop(busy);

    // Four idle connections: a new one sheds the oldest and is served.
    let mut idle = Vec::new();
    for _ in 0..4 {
        idle.push(TcpStream::connect(s.addr).await.unwrap());
    }
    let answer = raw(&s, healthz).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert_eq!(
        read_to_close(&mut idle[0]).await,
        "",
        "the oldest idle one is shed"
    );
}
both!(connections_past_the_limit_shed_idle_ones_or_are_closed);

/// Many connections at once, each with a request: all answered (the limit
/// is far above), the store unharmed.
async fn many_connections_at_once(b: Backend) {
    let s = TestServer::start(b).await;
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..200 {
        let addr = s.addr;
        calls.spawn(async move {
            let mut conn = TcpStream::connect(addr).await.unwrap();
            conn.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                .await
                .unwrap();
            read_to_close(&mut conn).await
        });
    }
    for answer in calls.join_all().await {
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }
    nothing_stored(&s).await;
}
both!(many_connections_at_once);
