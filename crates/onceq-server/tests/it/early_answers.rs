//! Answers given before the request's body was read (a bad key, a body
//! too large) say `Connection: close`, so that a keep-alive client opens a
//! new connection instead of writing its next request into a broken pipe;
//! answers after the whole body was read keep the connection open.

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

use crate::{
    both,
    harness::{Backend, TestServer},
};

/// Reads one answer's head (up to the blank line) and returns it lowercased.
async fn head(conn: &mut TcpStream) -> String {
    head_of(conn).await
}

async fn head_of(conn: &mut (impl AsyncReadExt + Unpin)) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 1];
    let read = async {
        while !got.ends_with(b"\r\n\r\n") {
            match conn.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => got.push(buf[0]),
            }
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(10), read)
        .await
        .expect("no answer");
    String::from_utf8_lossy(&got).to_ascii_lowercase()
}

fn publish_head(key: &str, length: usize) -> String {
    format!(
        "POST /v1/queue/publish HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    )
}

async fn unread_bodies_close_the_connection_saying_so(b: Backend) {
    let s = TestServer::start(b).await;
    // A wrong key: 401 from the headers, the body never read.
    let mut conn = TcpStream::connect(s.addr).await.unwrap();
    conn.write_all(publish_head("oq_wrong", 1000).as_bytes())
        .await
        .unwrap();
    conn.write_all(b"{\"queue\":").await.unwrap();
    let answer = head(&mut conn).await;
    assert!(answer.starts_with("http/1.1 401"), "{answer}");
    assert!(answer.contains("connection: close"), "{answer}");

    // A body over the limit: 413 once the limit is passed, the rest unread.
    let conn = TcpStream::connect(s.addr).await.unwrap();
    let (mut read, mut write) = conn.into_split();
    let length = 2 * s.state.config.max_body_bytes;
    write
        .write_all(publish_head(&s.key, length).as_bytes())
        .await
        .unwrap();
    let sender = tokio::spawn(async move {
        // Until the server stops reading and closes.
        let chunk = vec![b' '; 64 * 1024];
        for _ in 0..length / chunk.len() {
            if write.write_all(&chunk).await.is_err() {
                break;
            }
        }
    });
    let answer = head_of(&mut read).await;
    sender.abort();
    assert!(answer.starts_with("http/1.1 413"), "{answer}");
    assert!(answer.contains("connection: close"), "{answer}");
}
both!(unread_bodies_close_the_connection_saying_so);

async fn read_bodies_keep_the_connection(b: Backend) {
    let s = TestServer::start(b).await;
    let body = br#"{"queue":"jobs","payload":{"n":1}}"#;
    let mut conn = TcpStream::connect(s.addr).await.unwrap();
    for _ in 0..2 {
        conn.write_all(publish_head(&s.key, body.len()).as_bytes())
            .await
            .unwrap();
        conn.write_all(body).await.unwrap();
        let answer = head(&mut conn).await;
        assert!(answer.starts_with("http/1.1 200"), "{answer}");
        assert!(!answer.contains("connection: close"), "{answer}");
        let length: usize = answer
            .lines()
            .find_map(|l| l.strip_prefix("content-length: "))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let mut rest = vec![0u8; length];
        conn.read_exact(&mut rest).await.unwrap();
    }
}
both!(read_bodies_keep_the_connection);
