//! Which connections the server holds, and which it lets go.
//!
//! One client holding ~1 100 idle sockets used to take every one of the
//! `max_connections` slots, so legitimate clients were closed on accept (67 %
//! of their requests failed). Now:
//!
//! - **per source address** at most `max_connections_per_ip` connections;
//! - **in total** at most `max_connections`;
//! - when either bound is reached, the **oldest idle** connection (no
//!   request in progress; never having sent one counts as idle since it
//!   opened) in that scope is **shed** to make room, so a new client is
//!   served while sockets that only sit there go first. Only when every
//!   connection in the scope is busy is the new one closed;
//! - connections that send nothing are closed after `header_read_timeout`
//!   anyway (hyper), so idle ones are also reclaimed without pressure.
//!
//! Shedding closes a connection that has no request in progress, which a
//! client sees as a keep-alive connection closed by the server — the same
//! as the idle timeout, which HTTP clients handle by reconnecting.

use std::{
    collections::HashMap,
    net::IpAddr,
    sync::{Arc, Mutex},
    time::Instant,
};

use tokio_util::sync::CancellationToken;

/// The table of open connections. Cheap to share.
#[derive(Debug)]
pub struct Connections {
    table: Mutex<Table>,
    max_total: usize,
    max_per_ip: usize,
}

#[derive(Debug, Default)]
struct Table {
    next_id: u64,
    open: HashMap<u64, Entry>,
    per_ip: HashMap<IpAddr, usize>,
}

#[derive(Debug)]
struct Entry {
    ip: IpAddr,
    /// Requests in progress.
    busy: usize,
    /// Since when it has had none (its opening, or its last answer).
    idle_since: Instant,
    shed: CancellationToken,
}

/// Why a new connection was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Its address holds `max_connections_per_ip` busy connections.
    PerAddress,
    /// The server holds `max_connections` busy connections.
    Total,
}

impl Connections {
    /// A table bounded by `max_total` and `max_per_ip` (0: no per-address
    /// bound).
    pub fn new(max_total: usize, max_per_ip: usize) -> Arc<Self> {
        Arc::new(Self {
            table: Mutex::new(Table::default()),
            max_total: max_total.max(1),
            max_per_ip: if max_per_ip == 0 {
                usize::MAX
            } else {
                max_per_ip
            },
        })
    }

    /// Admits a connection from `ip`, shedding the oldest idle one in the
    /// scope of a bound it would pass.
    pub fn admit(self: &Arc<Self>, ip: IpAddr) -> Result<Admitted, Refused> {
        let mut t = self.lock();
        if t.per_ip.get(&ip).copied().unwrap_or(0) >= self.max_per_ip
            && !t.shed_oldest_idle(Some(ip))
        {
            return Err(Refused::PerAddress);
        }
        if t.open.len() >= self.max_total && !t.shed_oldest_idle(None) {
            return Err(Refused::Total);
        }
        let id = t.next_id;
        t.next_id += 1;
        let shed = CancellationToken::new();
        t.open.insert(
            id,
            Entry {
                ip,
                busy: 0,
                idle_since: Instant::now(),
                shed: shed.clone(),
            },
        );
        *t.per_ip.entry(ip).or_default() += 1;
        Ok(Admitted {
            table: self.clone(),
            id,
            shed,
        })
    }

    /// Connections open now (for tests and metrics).
    pub fn open(&self) -> usize {
        self.lock().open.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        // Every change is a whole insert/remove; a panic cannot leave a
        // half-made entry behind.
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Table {
    /// Sheds the connection idle longest (of `ip`, or of anyone); false
    /// when every candidate is busy. A shed connection leaves the table at
    /// once, so its slot is free before its task has finished closing.
    fn shed_oldest_idle(&mut self, ip: Option<IpAddr>) -> bool {
        let oldest = self
            .open
            .iter()
            .filter(|(_, e)| e.busy == 0 && ip.is_none_or(|ip| e.ip == ip))
            .min_by_key(|(_, e)| e.idle_since)
            .map(|(id, _)| *id);
        match oldest {
            Some(id) => {
                if let Some(entry) = self.remove(id) {
                    entry.shed.cancel();
                }
                true
            }
            None => false,
        }
    }

    fn remove(&mut self, id: u64) -> Option<Entry> {
        let entry = self.open.remove(&id)?;
        if let Some(n) = self.per_ip.get_mut(&entry.ip) {
            *n -= 1;
            if *n == 0 {
                self.per_ip.remove(&entry.ip);
            }
        }
        Some(entry)
    }
}

/// A connection's place in the table; dropping it frees the place.
#[derive(Debug)]
pub struct Admitted {
    table: Arc<Connections>,
    id: u64,
    shed: CancellationToken,
}

impl Admitted {
    /// Cancelled when the connection is shed: close it.
    pub fn shed(&self) -> &CancellationToken {
        &self.shed
    }

    /// Marks a request started; the connection is busy until the returned
    /// guard is dropped (when its answer is ready).
    pub fn request(&self) -> Busy {
        let mut t = self.table.lock();
        if let Some(e) = t.open.get_mut(&self.id) {
            e.busy += 1;
        }
        Busy {
            table: self.table.clone(),
            id: self.id,
        }
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.table.lock().remove(self.id);
    }
}

/// A request in progress on a connection.
#[derive(Debug)]
pub struct Busy {
    table: Arc<Connections>,
    id: u64,
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut t = self.table.lock();
        if let Some(e) = t.open.get_mut(&self.id) {
            e.busy = e.busy.saturating_sub(1);
            if e.busy == 0 {
                e.idle_since = Instant::now();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_full_address_sheds_its_own_oldest_idle_connection() {
        let c = Connections::new(10, 2);
        let first = c.admit(ip("10.0.0.1")).unwrap();
        let second = c.admit(ip("10.0.0.1")).unwrap();
        let other = c.admit(ip("10.0.0.2")).unwrap();
        let third = c.admit(ip("10.0.0.1")).unwrap();
        assert!(first.shed().is_cancelled(), "the oldest idle one goes");
        assert!(!second.shed().is_cancelled() && !other.shed().is_cancelled());
        assert_eq!(c.open(), 3);
        // Busy connections are never shed: with both busy, refuse.
        let (_a, _b) = (second.request(), third.request());
        assert_eq!(c.admit(ip("10.0.0.1")).unwrap_err(), Refused::PerAddress);
        assert!(
            c.admit(ip("10.0.0.3")).is_ok(),
            "other addresses still get in"
        );
    }

    #[test]
    fn a_full_server_sheds_the_oldest_idle_connection_of_anyone() {
        let c = Connections::new(2, 0);
        let idle = c.admit(ip("10.0.0.1")).unwrap();
        let busy = c.admit(ip("10.0.0.2")).unwrap();
        let _req = busy.request();
        let new = c.admit(ip("10.0.0.3")).unwrap();
        assert!(idle.shed().is_cancelled());
        let _req2 = new.request();
        assert_eq!(c.admit(ip("10.0.0.4")).unwrap_err(), Refused::Total);
        drop(_req);
        // Idle again since its answer: shed next.
        c.admit(ip("10.0.0.4")).unwrap();
        assert!(busy.shed().is_cancelled());
    }

    #[test]
    fn closed_connections_free_their_places() {
        let c = Connections::new(1, 1);
        let a = c.admit(ip("10.0.0.1")).unwrap();
        let _busy = a.request();
        assert!(c.admit(ip("10.0.0.1")).is_err());
        drop(_busy);
        drop(a);
        assert_eq!(c.open(), 0);
        assert!(c.admit(ip("10.0.0.1")).is_ok());
    }
}
