//! A flood of idle connections (sockets opened and left silent, as one
//! unauthenticated client can hold by the thousand) does not lock out
//! legitimate clients: their requests still succeed, from one flooding
//! address (the per-address bound) and from many (the oldest idle
//! connection is shed for a new one). Over real sockets: the attackers
//! bind other loopback addresses (127.0.0.2, …) than the clients' 127.0.0.1.

use std::net::{IpAddr, SocketAddr};

use onceq_server::ServerConfig;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpSocket, TcpStream},
};

use crate::harness::{Backend, TestServer};

fn small_limits() -> ServerConfig {
    ServerConfig {
        max_connections: 200,
        max_connections_per_ip: 50,
        ..ServerConfig::default()
    }
}

/// Opens `n` connections from `from` and sends nothing on them.
async fn idle_sockets(to: SocketAddr, from: IpAddr, n: usize) -> Vec<TcpStream> {
    let mut held = Vec::with_capacity(n);
    for _ in 0..n {
        let socket = TcpSocket::new_v4().unwrap();
        socket.bind(SocketAddr::new(from, 0)).unwrap();
        held.push(socket.connect(to).await.unwrap());
    }
    held
}

/// Legitimate requests, each on a new connection from 127.0.0.1: how many
/// were answered 200.
async fn served(s: &TestServer, n: usize) -> usize {
    let request = format!(
        "GET /v1/queue/list HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nConnection: close\r\n\r\n",
        s.key
    );
    let mut ok = 0;
    for _ in 0..n {
        let Ok(mut conn) = TcpStream::connect(s.addr).await else {
            continue;
        };
        if conn.write_all(request.as_bytes()).await.is_err() {
            continue;
        }
        let mut answer = Vec::new();
        let read = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            conn.read_to_end(&mut answer),
        );
        if matches!(read.await, Ok(Ok(_))) && answer.starts_with(b"HTTP/1.1 200") {
            ok += 1;
        }
    }
    ok
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_holding_idle_sockets_locks_nobody_out() {
    let s = TestServer::start_with(Backend::Sqlite, small_limits()).await;
    // More than the whole server's bound, from one address.
    let _held = idle_sockets(s.addr, "127.0.0.2".parse().unwrap(), 300).await;
    let ok = served(&s, 100).await;
    assert!(ok >= 95, "only {ok} of 100 legitimate requests succeeded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_addresses_holding_idle_sockets_lock_nobody_out() {
    let s = TestServer::start_with(Backend::Sqlite, small_limits()).await;
    // Each address under its own bound, together over the server's.
    let mut held = Vec::new();
    for last in 2..10u8 {
        let from = IpAddr::from([127, 0, 0, last]);
        held.extend(idle_sockets(s.addr, from, 40).await);
    }
    let ok = served(&s, 100).await;
    assert!(ok >= 95, "only {ok} of 100 legitimate requests succeeded");
    // The flood paid for it: its oldest sockets were closed.
    let mut closed = 0;
    for conn in held.iter_mut().take(100) {
        let mut buf = [0u8; 1];
        if let Ok(Ok(0)) =
            tokio::time::timeout(std::time::Duration::from_millis(100), conn.read(&mut buf)).await
        {
            closed += 1;
        }
    }
    assert!(closed > 0, "no idle socket was shed");
}
