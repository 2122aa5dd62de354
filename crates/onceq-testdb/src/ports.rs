//! Ports for the servers a test starts (PostgreSQL, PgBouncer, Patroni's
//! REST API, etcd, HAProxy, `onceq serve`).
//!
//! Why not the port `bind(…:0)` hands out: the OS takes it from the
//! ephemeral range, the same range every outgoing connection's local port
//! comes from. Between the check and the server's own bind (a second or
//! more for Patroni, a Python program), any connection made by the dozens
//! of processes of a test run may take it, and the server fails with
//! "Address already in use" (seen: a Patroni node's REST API, in a full
//! `scripts/test` run). A port below the ephemeral range is never taken
//! that way; only another test's pick could collide, and picks are spread
//! at random over several thousand ports and checked free.

use std::sync::atomic::{AtomicU32, Ordering};

/// Where Linux's ephemeral range starts when it cannot be read.
const EPHEMERAL_START: u16 = 32768;
/// How many ports below the ephemeral range picks are spread over.
const SPREAD: u16 = 12000;

/// A port nobody listens on right now, below the ephemeral range.
pub fn free_port() -> u16 {
    let top = ephemeral_start();
    let bottom = top.saturating_sub(SPREAD).max(1024);
    let span = u32::from(top - bottom);
    for _ in 0..1000 {
        let port = bottom + (next_random() % span) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("onceq-testdb: no free port in {bottom}..{top} after 1000 tries")
}

/// The first port of the ephemeral range (`ip_local_port_range`).
fn ephemeral_start() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .filter(|&p: &u16| p > 2048)
        .unwrap_or(EPHEMERAL_START)
}

/// A xorshift walk seeded by the process id and the clock: picks differ
/// from one call to the next and from one test process to another.
fn next_random() -> u32 {
    static STATE: AtomicU32 = AtomicU32::new(0);
    let mut x = STATE.load(Ordering::Relaxed);
    if x == 0 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.subsec_nanos());
        x = (std::process::id() ^ nanos.rotate_left(11)) | 1;
    }
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    STATE.store(x, Ordering::Relaxed);
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each pick is bound again as soon as it is made: the test binaries
    /// of a run start servers on ports of the same range meanwhile, so a
    /// port checked only after fifty more picks may be taken by then (seen
    /// in a CI run), which says nothing about the pick.
    #[test]
    fn ports_are_free_and_below_the_ephemeral_range() {
        let top = ephemeral_start();
        let mut picks = Vec::new();
        for _ in 0..50 {
            let p = free_port();
            assert!(p < top && p >= 1024, "{p} not below {top}");
            std::net::TcpListener::bind(("127.0.0.1", p)).expect("free when picked");
            picks.push(p);
        }
        let distinct: std::collections::HashSet<_> = picks.iter().collect();
        assert!(distinct.len() > 40, "picks repeat: {picks:?}");
    }
}
