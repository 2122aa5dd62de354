//! The tarpit: an HTTP receiver on 127.0.0.1 that accepts every
//! connection, reads whatever is sent and never answers — the worst a push
//! subscription, webhook or cron task can point at. Each delivery the
//! servers send it holds a socket until its own timeout (or the server
//! dies), so how many it holds at once is what the outbound caps allow.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

/// What the tarpit saw.
#[derive(Debug, Default)]
pub struct Tarpit {
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Connections accepted in all.
    pub accepted: AtomicU64,
    /// Connections open now (accepted, not yet closed by the sender).
    pub open: AtomicU64,
    /// The most open at once.
    pub peak: AtomicU64,
    /// Bytes read (the requests it never answered).
    pub bytes: AtomicU64,
}

impl Tarpit {
    /// Listens until `stop` is cancelled, then drops every connection.
    pub async fn start(stop: CancellationToken) -> anyhow::Result<Arc<Tarpit>> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let tarpit = Arc::new(Tarpit {
            port: listener.local_addr()?.port(),
            ..Tarpit::default()
        });
        let me = tarpit.clone();
        tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    () = stop.cancelled() => return,
                    a = listener.accept() => a,
                };
                let Ok((socket, _)) = accepted else {
                    // Out of descriptors, say: the hostile client's own
                    // problem, try again.
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                };
                me.accepted.fetch_add(1, Relaxed);
                let open = me.open.fetch_add(1, Relaxed) + 1;
                me.peak.fetch_max(open, Relaxed);
                let (me, stop) = (me.clone(), stop.clone());
                tokio::spawn(async move {
                    me.hold(socket, stop).await;
                    me.open.fetch_sub(1, Relaxed);
                });
            }
        });
        Ok(tarpit)
    }

    /// Reads until the sender gives up (EOF or reset), never writing.
    async fn hold(&self, mut socket: tokio::net::TcpStream, stop: CancellationToken) {
        let mut buf = vec![0u8; 4096];
        loop {
            let read = tokio::select! {
                () = stop.cancelled() => return,
                r = socket.read(&mut buf) => r,
            };
            match read {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    self.bytes.fetch_add(n as u64, Relaxed);
                }
            }
        }
    }
}
