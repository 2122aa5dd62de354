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
//! - when no connection in the scope is idle, the one **parked** longest
//!   in a long poll (`consume` with `wait_seconds`, waiting for a message)
//!   is **cut**: its wait ends at once with the empty answer a wait that
//!   ran out gives (`items: []`), sent with `Connection: close`, and its
//!   place goes to the new connection. A parked poll holds nothing but its
//!   socket and a small future (no store connection, no lock, no permit),
//!   so it must not keep a server full: 1 024 parked polls used to lock
//!   every other client out. Only when every connection in the scope is
//!   busy with real work is the new one closed;
//! - connections that send nothing are closed after `header_read_timeout`
//!   anyway (hyper), so idle ones are also reclaimed without pressure.
//!
//! The total bound is sized at start from the process's descriptor limit
//! ([`sized`]) unless the operator sets one.
//!
//! Shedding closes a connection that has no request in progress, which a
//! client sees as a keep-alive connection closed by the server — the same
//! as the idle timeout, which HTTP clients handle by reconnecting.

use std::{
    collections::HashMap,
    net::IpAddr,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use tokio_util::sync::CancellationToken;

/// How long a connection must have been idle before it is shed ahead of
/// a parked long poll (see `make_room`).
const IDLE_GRACE: Duration = Duration::from_secs(1);

/// The table of open connections. Cheap to share.
#[derive(Debug)]
pub struct Connections {
    table: Mutex<Table>,
    max_total: usize,
    max_per_ip: usize,
    /// Parked long polls cut short for a new connection, since start.
    cut: std::sync::atomic::AtomicU64,
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
    /// While a request on it is parked in a long poll: since when, and
    /// the token that cuts the wait short.
    parked: Option<(Instant, CancellationToken)>,
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
            cut: Default::default(),
        })
    }

    /// The bound on connections in total.
    pub fn max_total(&self) -> usize {
        self.max_total
    }

    /// The bound per source address (`usize::MAX`: none).
    pub fn max_per_ip(&self) -> usize {
        self.max_per_ip
    }

    /// Parked long polls cut short for a new connection since start.
    pub fn cut(&self) -> u64 {
        self.cut.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Admits a connection from `ip`, shedding the oldest idle one in the
    /// scope of a bound it would pass.
    pub fn admit(self: &Arc<Self>, ip: IpAddr) -> Result<Admitted, Refused> {
        let mut t = self.lock();
        if t.per_ip.get(&ip).copied().unwrap_or(0) >= self.max_per_ip
            && !self.make_room(&mut t, Some(ip))
        {
            return Err(Refused::PerAddress);
        }
        if t.open.len() >= self.max_total && !self.make_room(&mut t, None) {
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
                parked: None,
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

    /// Frees one place in the scope: the oldest connection idle for at
    /// least [`IDLE_GRACE`], else the longest-parked long poll, else the
    /// oldest idle one however new; false when every one is busy. The
    /// grace keeps a client that has just connected (and not yet sent its
    /// request) from being shed by the next arrival: a cut poll's client
    /// reconnecting at once would otherwise shed the fresh connection of
    /// the very client the cut made room for.
    fn make_room(&self, t: &mut Table, ip: Option<IpAddr>) -> bool {
        if t.shed_oldest_idle(ip, IDLE_GRACE) {
            return true;
        }
        if t.cut_longest_parked(ip) {
            self.cut.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return true;
        }
        t.shed_oldest_idle(ip, Duration::ZERO)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        // Every change is a whole insert/remove; a panic cannot leave a
        // half-made entry behind.
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Table {
    /// Sheds the connection idle longest (of `ip`, or of anyone), if idle
    /// for at least `idle_for`; false when there is none. A shed connection leaves the table at
    /// once, so its slot is free before its task has finished closing.
    fn shed_oldest_idle(&mut self, ip: Option<IpAddr>, idle_for: Duration) -> bool {
        let now = Instant::now();
        let oldest = self
            .open
            .iter()
            .filter(|(_, e)| e.busy == 0 && ip.is_none_or(|ip| e.ip == ip))
            .filter(|(_, e)| now.duration_since(e.idle_since) >= idle_for)
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

    /// Cuts the long poll parked longest (of `ip`, or of anyone): its
    /// connection leaves the table at once (its place is free now), and
    /// its wait ends with an empty answer after which the connection
    /// closes ([`Admitted::was_cut`]). False when none is parked.
    fn cut_longest_parked(&mut self, ip: Option<IpAddr>) -> bool {
        let longest = self
            .open
            .iter()
            .filter(|(_, e)| ip.is_none_or(|ip| e.ip == ip))
            .filter_map(|(id, e)| e.parked.as_ref().map(|(since, _)| (*id, *since)))
            .min_by_key(|(_, since)| *since)
            .map(|(id, _)| id);
        let Some(id) = longest else { return false };
        if let Some((_, cut)) = self.remove(id).and_then(|e| e.parked) {
            cut.cancel();
        }
        true
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

    /// Marks the connection's request parked in a long poll until the
    /// returned guard is dropped: a new connection that finds no idle one
    /// to shed may cut it ([`Parked::cut`]).
    pub fn park(&self) -> Parked {
        let token = CancellationToken::new();
        let mut t = self.table.lock();
        match t.open.get_mut(&self.id) {
            Some(e) => e.parked = Some((Instant::now(), token.clone())),
            // Already out of the table (shed or cut): nothing to wait for.
            None => token.cancel(),
        }
        Parked {
            table: self.table.clone(),
            id: self.id,
            token,
        }
    }

    /// True once a parked request of this connection was cut for a new
    /// connection: its answer closes the connection.
    pub fn was_cut(&self) -> bool {
        !self.table.lock().open.contains_key(&self.id)
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

/// A request parked in a long poll (see [`Admitted::park`]).
#[derive(Debug)]
pub struct Parked {
    table: Arc<Connections>,
    id: u64,
    token: CancellationToken,
}

impl Parked {
    /// Cancelled when the wait is cut short for a new connection.
    pub fn cut(&self) -> &CancellationToken {
        &self.token
    }
}

impl Drop for Parked {
    fn drop(&mut self) {
        if let Some(e) = self.table.lock().open.get_mut(&self.id) {
            e.parked = None;
        }
    }
}

/// How a request reaches its connection's place in the table (a request
/// extension the serving loop adds; absent in in-process tests).
#[derive(Debug, Clone)]
pub struct Slot(pub Arc<Admitted>);

/// Descriptors kept out of the connection budget whatever else is
/// configured: the listener, the store's files or pool, logs, DNS, the
/// embedded store's writer and readers.
const RESERVED_DESCRIPTORS: u64 = 256;

/// The total connection bound for a process allowed `nofile` descriptors,
/// with `outbound` of them promised to outbound deliveries: what is left
/// after those and `RESERVED_DESCRIPTORS`, at least 16 (a process with
/// fewer descriptors than that serves few connections whatever we say;
/// the start-up log warns).
pub fn sized(nofile: u64, outbound: usize) -> usize {
    let reserved = RESERVED_DESCRIPTORS.saturating_add(outbound as u64);
    let budget = nofile.saturating_sub(reserved).max(16);
    usize::try_from(budget).unwrap_or(usize::MAX)
}

/// The process's descriptor limit (the soft `RLIMIT_NOFILE`), `None` when
/// it cannot be read or is unlimited.
pub fn descriptor_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Nofile).current
}

/// Raises the soft descriptor limit to the hard one (what a process may
/// do for itself), so a unit's `LimitNOFILE` or a shell's hard limit is
/// what the server gets; answers the soft limit now in force.
pub fn raise_descriptor_limit() -> Option<u64> {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let now = getrlimit(Resource::Nofile);
    if let (Some(soft), Some(hard)) = (now.current, now.maximum)
        && hard > soft
    {
        let raised = Rlimit {
            current: Some(hard),
            maximum: Some(hard),
        };
        match setrlimit(Resource::Nofile, raised) {
            Ok(()) => tracing::info!(
                from = soft,
                to = hard,
                "raised the descriptor limit (RLIMIT_NOFILE) to its hard limit"
            ),
            Err(e) => tracing::warn!(error = %e, soft, hard, "cannot raise the descriptor limit"),
        }
    }
    descriptor_limit()
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
    fn a_full_server_cuts_the_longest_parked_long_poll_when_none_is_idle() {
        let c = Connections::new(2, 0);
        let (a, b) = (
            c.admit(ip("10.0.0.1")).unwrap(),
            c.admit(ip("10.0.0.1")).unwrap(),
        );
        let (_ra, _rb) = (a.request(), b.request());
        let first = a.park();
        let second = b.park();
        let new = c.admit(ip("10.0.0.2")).unwrap();
        let _rn = new.request();
        assert!(first.cut().is_cancelled(), "the one parked longest is cut");
        assert!(a.was_cut() && !b.was_cut());
        assert!(!second.cut().is_cancelled() && !a.shed().is_cancelled());
        assert_eq!((c.open(), c.cut()), (2, 1));
        // Unparked (its wait found a message): busy again, never cut.
        drop(second);
        assert_eq!(c.admit(ip("10.0.0.3")).unwrap_err(), Refused::Total);
    }

    #[test]
    fn the_budget_leaves_room_for_files_and_outbound_sockets() {
        assert_eq!(sized(65_536, 512), 65_536 - 256 - 512);
        assert_eq!(sized(1_024, 512), 256);
        assert_eq!(sized(100, 512), 16, "never below the floor");
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
