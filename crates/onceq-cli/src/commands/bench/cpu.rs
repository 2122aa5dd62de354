//! CPU time and context switches per operation, read from `/proc` before
//! and after each phase: the server's and, when it runs on this machine,
//! PostgreSQL's (every process of the cluster: the postmaster and its
//! children, the backends).
//!
//! Why: on a shared machine throughput moves with the load of everything
//! else, while the CPU one operation costs hardly does; it is the figure an
//! optimisation changes.
//!
//! - CPU: `utime + stime` of `/proc/<pid>/stat`, which covers every thread
//!   of the process, those that have exited included. For PostgreSQL, the
//!   postmaster's own time plus `cutime + cstime` (the backends it has
//!   reaped) plus each live child's time, so a backend that ends during a
//!   phase still counts.
//! - Context switches: `voluntary_ctxt_switches + nonvoluntary_ctxt_switches`
//!   of `/proc/<pid>/task/*/status`, summed over the live threads (a
//!   thread that exits during a phase takes its count with it, so this is a
//!   lower bound). PostgreSQL's are counted per process, each live one's
//!   growth since the phase began: on a shared cluster other clients'
//!   backends end during a phase, and a sum over the processes alive at
//!   each end would drop by their counts (it once read 0 for a phase).
//!
//! Finding the processes: the server by `--server-pid`, else by the port
//! of `--url` when it is on this machine (the process holding the listening
//! socket); PostgreSQL by `--postgres-pid` (the postmaster), else
//! `--postgres-data-dir` (its `postmaster.pid`), else the process listening
//! on a local port the server holds a connection to, if it is `postgres`.

use std::{
    collections::{HashMap, HashSet},
    fs,
    path::Path,
};

use serde::Serialize;

/// The processes a bench watches.
#[derive(Debug, Clone, Copy, Default)]
pub struct Watch {
    pub server: Option<u32>,
    /// The postmaster.
    pub postgres: Option<u32>,
    /// Microseconds per clock tick of `/proc/<pid>/stat`.
    tick_us: f64,
}

/// Counters at one instant.
#[derive(Debug, Clone, Default)]
pub struct Sample {
    server_ticks: u64,
    server_switches: u64,
    postgres_ticks: u64,
    /// Per process of the cluster (see the module doc).
    postgres_switches: HashMap<u32, u64>,
    requests: u64,
}

/// What one phase cost, per job and per HTTP request.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseCpu {
    /// HTTP requests the bench made in the phase.
    pub requests: u64,
    /// Server CPU per job (per publish in an enqueue phase).
    pub server_cpu_us_per_job: f64,
    /// PostgreSQL CPU per job, when PostgreSQL is watched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub postgres_cpu_us_per_job: Option<f64>,
    /// Server plus PostgreSQL CPU per job.
    pub total_cpu_us_per_job: f64,
    pub server_context_switches_per_request: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub postgres_context_switches_per_request: Option<f64>,
}

/// Which processes were watched, for the report.
#[derive(Debug, Clone, Serialize)]
pub struct Watched {
    pub server_pid: Option<u32>,
    pub postgres_pid: Option<u32>,
}

impl Watch {
    /// Finds the processes (see the module doc).
    pub fn find(
        url: &str,
        server_pid: Option<u32>,
        postgres_pid: Option<u32>,
        postgres_data_dir: Option<&Path>,
    ) -> anyhow::Result<Self> {
        let server = match server_pid {
            Some(pid) => Some(pid),
            None => local_port(url).and_then(listener_of),
        };
        let postgres = match (postgres_pid, postgres_data_dir) {
            (Some(pid), _) => Some(pid),
            (None, Some(dir)) => Some(postmaster_of(dir)?),
            (None, None) => server.and_then(postgres_behind),
        };
        for pid in [server, postgres].into_iter().flatten() {
            anyhow::ensure!(
                Path::new(&format!("/proc/{pid}/stat")).exists(),
                "no process {pid} to watch"
            );
        }
        Ok(Self {
            server,
            postgres,
            tick_us: 1e6 / clock_ticks_per_second(),
        })
    }

    pub fn watched(&self) -> Watched {
        Watched {
            server_pid: self.server,
            postgres_pid: self.postgres,
        }
    }

    /// The counters now; `requests` is the bench's own count so far.
    pub fn sample(&self, requests: u64) -> Sample {
        let mut s = Sample {
            requests,
            ..Sample::default()
        };
        if let Some(pid) = self.server {
            s.server_ticks = stat(pid).map_or(0, |st| st.ticks);
            s.server_switches = switches(pid);
        }
        if let Some(pm) = self.postgres {
            let own = stat(pm);
            s.postgres_ticks = own.as_ref().map_or(0, |st| st.ticks + st.child_ticks);
            s.postgres_switches.insert(pm, switches(pm));
            for child in children(pm) {
                s.postgres_ticks += stat(child).map_or(0, |st| st.ticks);
                s.postgres_switches.insert(child, switches(child));
            }
        }
        s
    }

    /// What happened between `before` and `after`, for `jobs` jobs; `None`
    /// when no server is watched.
    pub fn cost(&self, before: Sample, after: Sample, jobs: usize) -> Option<PhaseCpu> {
        self.server?;
        let jobs = jobs.max(1) as f64;
        let requests = after.requests.saturating_sub(before.requests);
        let per_request = |n: u64| round1(n as f64 / requests.max(1) as f64);
        let us = |ticks: u64| ticks as f64 * self.tick_us / jobs;
        let server = us(after.server_ticks.saturating_sub(before.server_ticks));
        let postgres = self
            .postgres
            .map(|_| us(after.postgres_ticks.saturating_sub(before.postgres_ticks)));
        Some(PhaseCpu {
            requests,
            server_cpu_us_per_job: round1(server),
            postgres_cpu_us_per_job: postgres.map(round1),
            total_cpu_us_per_job: round1(server + postgres.unwrap_or(0.0)),
            server_context_switches_per_request: per_request(
                after.server_switches.saturating_sub(before.server_switches),
            ),
            postgres_context_switches_per_request: self
                .postgres
                .map(|_| per_request(growth(&before.postgres_switches, &after.postgres_switches))),
        })
    }
}

/// How much the processes alive at `after` switched since `before`: a
/// process new since then, all of its count.
fn growth(before: &HashMap<u32, u64>, after: &HashMap<u32, u64>) -> u64 {
    after
        .iter()
        .map(|(pid, n)| n.saturating_sub(before.get(pid).copied().unwrap_or(0)))
        .sum()
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// The fields of `/proc/<pid>/stat` this module reads.
struct Stat {
    ppid: u32,
    /// `utime + stime`.
    ticks: u64,
    /// `cutime + cstime`: the reaped children's.
    child_ticks: u64,
}

fn stat(pid: u32) -> Option<Stat> {
    parse_stat(&fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Parses a `/proc/<pid>/stat` line. The command name (field 2) is in
/// parentheses and may hold spaces or parentheses: fields are counted from
/// the last `)`.
fn parse_stat(line: &str) -> Option<Stat> {
    let rest = &line[line.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // `f[0]` is field 3 (state): field n is `f[n - 3]`.
    let num = |n: usize| f.get(n - 3)?.parse::<u64>().ok();
    Some(Stat {
        ppid: u32::try_from(num(4)?).ok()?,
        ticks: num(14)? + num(15)?,
        child_ticks: num(16)? + num(17)?,
    })
}

/// Voluntary plus involuntary context switches over the live threads.
fn switches(pid: u32) -> u64 {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|t| fs::read_to_string(t.path().join("status")).ok())
        .map(|s| parse_switches(&s))
        .sum()
}

fn parse_switches(status: &str) -> u64 {
    status
        .lines()
        .filter_map(|l| {
            let (name, v) = l.split_once(':')?;
            matches!(
                name,
                "voluntary_ctxt_switches" | "nonvoluntary_ctxt_switches"
            )
            .then(|| v.trim().parse::<u64>().ok())
            .flatten()
        })
        .sum()
}

fn processes() -> impl Iterator<Item = u32> {
    fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
}

fn children(parent: u32) -> Vec<u32> {
    processes()
        .filter(|pid| stat(*pid).is_some_and(|s| s.ppid == parent))
        .collect()
}

/// `USER_HZ`, the unit of `/proc/<pid>/stat`'s times (100 on Linux's
/// common architectures; `getconf` says for sure).
fn clock_ticks_per_second() -> f64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok()?.trim().parse().ok())
        .filter(|hz: &f64| *hz > 0.0)
        .unwrap_or(100.0)
}

/// The port of `url` when its host is this machine.
fn local_port(url: &str) -> Option<u16> {
    let url = reqwest::Url::parse(url).ok()?;
    let host = url
        .host_str()?
        .trim_start_matches('[')
        .trim_end_matches(']');
    let local = host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback() || ip.is_unspecified());
    local.then(|| url.port_or_known_default()).flatten()
}

/// A TCP socket of `/proc/net/tcp{,6}`.
struct Socket {
    local_port: u16,
    remote_ip_loopback: bool,
    remote_port: u16,
    listening: bool,
    inode: u64,
}

fn sockets() -> Vec<Socket> {
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|p| fs::read_to_string(p).ok())
        .flat_map(|t| {
            t.lines()
                .skip(1)
                .filter_map(parse_socket)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// One line of `/proc/net/tcp`: `sl local rem st ... uid timeout inode`,
/// addresses as `HEXIP:HEXPORT` (the IP in host byte order per 32 bits).
fn parse_socket(line: &str) -> Option<Socket> {
    let f: Vec<&str> = line.split_whitespace().collect();
    let port = |a: &str| u16::from_str_radix(a.rsplit_once(':')?.1, 16).ok();
    let (remote_ip, _) = f.get(2)?.rsplit_once(':')?;
    Some(Socket {
        local_port: port(f.get(1)?)?,
        remote_ip_loopback: is_loopback_hex(remote_ip),
        remote_port: port(f.get(2)?)?,
        listening: *f.get(3)? == "0A",
        inode: f.get(9)?.parse().ok()?,
    })
}

/// 127.0.0.0/8 as IPv4 (`0100007F`, little-endian), `::1`, or `::ffff:127.x`.
fn is_loopback_hex(ip: &str) -> bool {
    match ip.len() {
        8 => ip.ends_with("7F"),
        32 => {
            ip == "00000000000000000000000001000000"
                || (ip.starts_with("0000000000000000FFFF0000") && ip.ends_with("7F"))
        }
        _ => false,
    }
}

/// The socket inodes `pid` holds open.
fn socket_inodes(pid: u32) -> HashSet<u64> {
    fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|fd| {
            let target = fs::read_link(fd.path()).ok()?;
            let t = target.to_str()?;
            t.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok()
        })
        .collect()
}

/// The process holding the socket listening on `port`.
fn listener_of(port: u16) -> Option<u32> {
    let inodes: HashSet<u64> = sockets()
        .into_iter()
        .filter(|s| s.listening && s.local_port == port)
        .map(|s| s.inode)
        .collect();
    if inodes.is_empty() {
        return None;
    }
    // The lowest pid holding it: the parent, if it was inherited.
    processes()
        .filter(|pid| !socket_inodes(*pid).is_disjoint(&inodes))
        .min()
}

/// The postmaster behind the server: listening on a local port the server
/// is connected to, and named `postgres`.
fn postgres_behind(server: u32) -> Option<u32> {
    let held = socket_inodes(server);
    let ports: HashSet<u16> = sockets()
        .into_iter()
        .filter(|s| !s.listening && s.remote_ip_loopback && held.contains(&s.inode))
        .map(|s| s.remote_port)
        .collect();
    ports.into_iter().filter_map(listener_of).find(|pid| {
        fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "postgres")
    })
}

/// The postmaster's pid: the first line of `<data dir>/postmaster.pid`.
fn postmaster_of(data_dir: &Path) -> anyhow::Result<u32> {
    let file = data_dir.join("postmaster.pid");
    let text = fs::read_to_string(&file)
        .map_err(|e| anyhow::anyhow!("--postgres-data-dir: reading {}: {e}", file.display()))?;
    text.lines()
        .next()
        .and_then(|l| l.trim().parse().ok())
        .ok_or_else(|| anyhow::anyhow!("--postgres-data-dir: {} has no pid", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_from_the_last_parenthesis() {
        let line = "4242 (a (b) c) S 7 4242 4242 0 -1 4194560 1 0 0 0 \
                    120 30 5 6 20 0 1 0 100 0 0";
        let s = parse_stat(line).unwrap();
        assert_eq!((s.ppid, s.ticks, s.child_ticks), (7, 150, 11));
    }

    #[test]
    fn switches_of_processes_that_ended_are_not_taken_off_the_others() {
        // Backend 2 ended during the phase (another client's, on a shared
        // cluster), 3 started: 1 switched 10 times, 3 five.
        let before = HashMap::from([(1, 100), (2, 500)]);
        let after = HashMap::from([(1, 110), (3, 5)]);
        assert_eq!(growth(&before, &after), 15);
    }

    #[test]
    fn switches_add_voluntary_and_involuntary() {
        let status = "Name:\tonceq\nvoluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t3\n";
        assert_eq!(parse_switches(status), 15);
    }

    #[test]
    fn socket_lines_give_ports_state_and_inode() {
        let line = "   1: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 \
                    00000000     0        0 98765 1 0000000000000000 20 4 30 10 -1";
        let s = parse_socket(line).unwrap();
        assert_eq!(
            (s.local_port, s.remote_port, s.listening, s.inode),
            (8080, 54321, false, 98765)
        );
        assert!(s.remote_ip_loopback);
        assert!(!is_loopback_hex("0101A8C0"));
    }

    #[test]
    fn only_local_urls_have_a_port_to_look_up() {
        assert_eq!(local_port("http://127.0.0.1:8787"), Some(8787));
        assert_eq!(local_port("http://localhost"), Some(80));
        assert_eq!(local_port("https://queue.example.com:8787"), None);
    }

    #[test]
    fn the_postmaster_is_the_first_line_of_postmaster_pid() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("postmaster.pid");
        std::fs::write(
            &file,
            "31337\n/var/lib/postgresql/15/main\n1764000000\n5432\n",
        )
        .unwrap();
        assert_eq!(postmaster_of(dir.path()).unwrap(), 31337);
        std::fs::write(&file, "").unwrap();
        assert!(postmaster_of(dir.path()).is_err());
    }

    #[test]
    fn this_process_is_found_listening_and_its_cpu_read() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let me = std::process::id();
        assert_eq!(listener_of(port), Some(me));
        assert!(switches(me) > 0);
        assert!(stat(me).is_some());
    }
}
