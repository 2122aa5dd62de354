//! A TCP proxy on 127.0.0.1 between two processes that can cut every live
//! connection at once — what a flaky network or a load balancer restart
//! does to a connection pool.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// A running proxy. Dropping the last handle does not stop it; cancel the
/// `stop` token given to [`Proxy::start`].
#[derive(Clone)]
pub struct Proxy {
    inner: Arc<Inner>,
}

struct Inner {
    name: String,
    listen: SocketAddr,
    /// The whole proxy's stop; every connection token is its child.
    stop: CancellationToken,
    /// Cancelled to cut the connections opened under it; replaced by a
    /// fresh token on every cut.
    current: Mutex<CancellationToken>,
    live: AtomicU64,
    cut: AtomicU64,
}

impl Proxy {
    /// Listens on a free port of 127.0.0.1 and forwards each connection to
    /// `127.0.0.1:upstream_port` until `stop` is cancelled.
    pub async fn start(
        name: &str,
        upstream_port: u16,
        stop: CancellationToken,
    ) -> anyhow::Result<Proxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let inner = Arc::new(Inner {
            name: name.to_owned(),
            listen: listener.local_addr()?,
            current: Mutex::new(stop.child_token()),
            stop: stop.clone(),
            live: AtomicU64::new(0),
            cut: AtomicU64::new(0),
        });
        let upstream = SocketAddr::from(([127, 0, 0, 1], upstream_port));
        let accepting = inner.clone();
        tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    () = stop.cancelled() => return,
                    a = listener.accept() => a,
                };
                let Ok((down, _)) = accepted else { continue };
                let token = accepting.current.lock().expect("proxy lock").clone();
                tokio::spawn(forward(accepting.clone(), down, upstream, token));
            }
        });
        Ok(Proxy { inner })
    }

    /// Its name, e.g. `worker->onceq0`.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The port clients connect to.
    pub fn port(&self) -> u16 {
        self.inner.listen.port()
    }

    /// Cuts every live connection; returns how many there were. New
    /// connections are accepted at once.
    pub fn cut(&self) -> u64 {
        let old = {
            let mut current = self.inner.current.lock().expect("proxy lock");
            std::mem::replace(&mut *current, self.inner.stop.child_token())
        };
        old.cancel();
        let n = self.inner.live.load(Relaxed);
        self.inner.cut.fetch_add(n, Relaxed);
        n
    }

    /// Connections cut so far.
    pub fn connections_cut(&self) -> u64 {
        self.inner.cut.load(Relaxed)
    }
}

/// Pipes one connection both ways until either side closes or a cut.
async fn forward(
    inner: Arc<Inner>,
    mut down: TcpStream,
    upstream: SocketAddr,
    token: CancellationToken,
) {
    let Ok(mut up) = TcpStream::connect(upstream).await else {
        return; // upstream is down: the client sees a closed connection
    };
    let _ = down.set_nodelay(true);
    let _ = up.set_nodelay(true);
    inner.live.fetch_add(1, Relaxed);
    tokio::select! {
        () = token.cancelled() => {}
        _ = tokio::io::copy_bidirectional(&mut down, &mut up) => {}
    }
    inner.live.fetch_sub(1, Relaxed);
    // Dropping both streams closes them (a FIN, or an RST with unread data).
}

/// What a cut fault picks: the proxies of one connection path, cut
/// together. A path to a onceq server is one proxy; the path to the HA
/// pair (a multi-host URL) is one proxy per host. Cutting them together
/// keeps a cut what it was with one PostgreSQL: every connection of that
/// path closed at once, wherever the primary is now — a cut of only the
/// standby's proxy would close nothing (the processes hold no connection
/// to a read-only host) and dilute the fault.
#[derive(Clone)]
pub struct Link {
    name: String,
    proxies: Vec<Proxy>,
}

impl Link {
    /// A path through `proxies` (at least one).
    pub fn new(name: &str, proxies: Vec<Proxy>) -> Link {
        Link {
            name: name.to_owned(),
            proxies,
        }
    }

    /// Its name, e.g. `api->pg`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The proxies' ports, in the order they were given.
    pub fn ports(&self) -> Vec<u16> {
        self.proxies.iter().map(Proxy::port).collect()
    }

    /// Cuts every live connection of every proxy; returns how many.
    pub fn cut(&self) -> u64 {
        self.proxies.iter().map(Proxy::cut).sum()
    }
}
