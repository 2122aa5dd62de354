//! [`Gate`]: a TCP proxy on 127.0.0.1 that a test can close — every live
//! connection shut, new ones accepted and dropped at once — and open again.
//! Each Patroni node reaches etcd through a gate of its own, so a test can
//! cut one node off from the consensus store while its PostgreSQL and REST
//! API stay reachable for everyone else.
//!
//! Plain threads, not tokio tasks: a shared cluster outlives the runtime of
//! the test that started it (each `#[test]` has its own).

use std::io;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// A running gate; it forwards until the process exits.
#[derive(Debug, Clone)]
pub struct Gate {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    port: u16,
    closed: AtomicBool,
    /// Both ends of every live connection, to shut them on [`Gate::close`].
    live: Mutex<Vec<TcpStream>>,
}

impl Gate {
    /// Listens on a free port and forwards to `127.0.0.1:upstream`.
    pub fn start(upstream: u16) -> Gate {
        let listener = TcpListener::bind("127.0.0.1:0")
            .unwrap_or_else(|e| panic!("onceq-testdb: bind a gate: {e}"));
        let port = listener.local_addr().expect("gate address").port();
        let inner = Arc::new(Inner {
            port,
            closed: AtomicBool::new(false),
            live: Mutex::new(Vec::new()),
        });
        let accepting = inner.clone();
        let upstream = SocketAddr::from(([127, 0, 0, 1], upstream));
        std::thread::spawn(move || {
            for down in listener.incoming() {
                let Ok(down) = down else { continue };
                if accepting.closed.load(Ordering::SeqCst) {
                    drop(down);
                    continue;
                }
                let Ok(up) = TcpStream::connect(upstream) else {
                    continue;
                };
                let _ = pipe(&accepting, down, up);
            }
        });
        Gate { inner }
    }

    /// The port to connect to instead of the upstream's.
    pub fn port(&self) -> u16 {
        self.inner.port
    }

    /// Drops all traffic: live connections shut, new ones refused (accepted
    /// and closed), until [`open`](Self::open).
    pub fn close(&self) {
        self.inner.closed.store(true, Ordering::SeqCst);
        for s in self.inner.live.lock().expect("gate lock").drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }

    /// Forwards again.
    pub fn open(&self) {
        self.inner.closed.store(false, Ordering::SeqCst);
    }
}

/// Two threads copying each way; the connection's streams are kept so a
/// close can shut them.
fn pipe(inner: &Arc<Inner>, down: TcpStream, up: TcpStream) -> io::Result<()> {
    let _ = down.set_nodelay(true);
    let _ = up.set_nodelay(true);
    {
        let mut live = inner.live.lock().expect("gate lock");
        live.retain(|s| s.peer_addr().is_ok());
        live.push(down.try_clone()?);
        live.push(up.try_clone()?);
    }
    let (down2, up2) = (down.try_clone()?, up.try_clone()?);
    std::thread::spawn(move || copy(down, up));
    std::thread::spawn(move || copy(up2, down2));
    Ok(())
}

fn copy(mut from: TcpStream, mut to: TcpStream) {
    let _ = io::copy(&mut from, &mut to);
    let _ = to.shutdown(Shutdown::Both);
    let _ = from.shutdown(Shutdown::Both);
}
