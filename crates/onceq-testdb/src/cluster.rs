//! [`TestCluster`]: one `initdb` data directory and the `postgres` serving it.
//!
//! # Why a watchdog
//!
//! The shared cluster lives in a `static`, and statics are never dropped, so
//! `Drop` cannot be what stops `postgres`. Instead `postgres` runs under a
//! tiny `sh` watchdog whose stdin is a pipe from the test process. The
//! watchdog blocks reading one line:
//!
//! - `fast` / `immediate`: [`TestCluster::stop`] asks for that shutdown; the
//!   directory stays for [`TestCluster::restart_server`].
//! - end of file: the test process exited (however it died, the kernel closes
//!   the pipe) or the cluster was dropped: immediate shutdown, then the
//!   watchdog removes the cluster directory itself.
//!
//! Every cluster directory lives under `/tmp/onceq-testdb/`, so anything a
//! `kill -9`'d watchdog left behind is easy to find and delete.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::host::{self, RunAs};

/// How long `postgres` gets to accept connections before we give up.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// The parent of every cluster directory.
const PARENT_DIR: &str = "/tmp/onceq-testdb";

/// Reads one line from the test process, then stops `postgres` accordingly.
/// Arguments: postgres binary, data dir, socket dir, port, log file, cluster
/// dir, then extra `postgres` arguments.
const WATCHDOG: &str = r#"
postgres="$1"; data="$2"; sock="$3"; port="$4"; log="$5"; dir="$6"; shift 6
"$postgres" -D "$data" -k "$sock" -p "$port" "$@" >>"$log" 2>&1 </dev/null &
pid=$!
read -r mode
case "$mode" in
  fast) kill -INT "$pid" ;;
  *) kill -QUIT "$pid" ;;
esac
wait "$pid"
case "$mode" in
  fast|immediate) ;;
  *) rm -rf "$dir" ;;
esac
"#;

/// How [`TestCluster::stop`] shuts `postgres` down (`pg_ctl stop -m ...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopMode {
    /// Roll back open transactions, checkpoint, exit (SIGINT).
    Fast,
    /// Exit at once, as in a crash; the next start runs recovery (SIGQUIT).
    Immediate,
}

impl StopMode {
    fn line(self) -> &'static [u8] {
        match self {
            StopMode::Fast => b"fast\n",
            StopMode::Immediate => b"immediate\n",
        }
    }
}

/// A database created by [`TestCluster::create_database`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestDatabase {
    /// `postgres://postgres@127.0.0.1:PORT/NAME` (trust auth).
    pub url: String,
    /// The database's name.
    pub name: String,
}

/// How a cluster is set up beyond the defaults (TLS, replication, durability).
#[derive(Debug, Clone, Default)]
pub struct ClusterOptions {
    /// PostgreSQL's default durability (`fsync` on), for benchmarks; off by
    /// default for speed.
    pub durable: bool,
    /// Extra `postgresql.conf` settings, `name=value`, passed as `-c`.
    pub settings: Vec<String>,
    /// `pg_hba.conf` lines for TCP connections, replacing the default
    /// (trust from anywhere); local socket connections stay trusted, as the
    /// helper's own admin connection needs.
    pub hba: Option<String>,
    /// Files written into the data directory before the first start,
    /// owned by the server's user with mode 0600 (certificates, keys).
    pub files: Vec<(String, Vec<u8>)>,
}

/// A PostgreSQL cluster in a temporary directory, serving on `127.0.0.1` and
/// on a unix socket in that directory. Dropping it stops `postgres`
/// (immediately) and removes the directory.
#[derive(Debug)]
pub struct TestCluster {
    dir: tempfile::TempDir,
    bindir: PathBuf,
    run_as: RunAs,
    options: ClusterOptions,
    port: u16,
    /// The running watchdog, `None` while stopped.
    server: Mutex<Option<Child>>,
    databases: AtomicU64,
}

impl TestCluster {
    /// Starts a cluster tuned for speed: `fsync` and `full_page_writes` off.
    /// Committed data survives [`stop`](Self::stop) in either mode (like a
    /// crash of postgres), but would not survive a crash of the machine.
    pub async fn start() -> TestCluster {
        Self::start_with_options(ClusterOptions::default()).await
    }

    /// Starts a cluster with PostgreSQL's default durability, for benchmarks.
    pub async fn start_durable() -> TestCluster {
        Self::start_with_options(ClusterOptions {
            durable: true,
            ..ClusterOptions::default()
        })
        .await
    }

    /// Starts a cluster set up as `options` say.
    pub async fn start_with_options(options: ClusterOptions) -> TestCluster {
        let bindir = host::bindir();
        let run_as = RunAs::detect();
        let dir = make_cluster_dir(run_as);
        init_data_dir(&bindir, run_as, dir.path()).await;
        write_setup(run_as, &dir.path().join("data"), &options);
        let mut cluster = TestCluster {
            dir,
            bindir,
            run_as,
            options,
            port: free_port(),
            server: Mutex::new(None),
            databases: AtomicU64::new(0),
        };
        // A free port can be taken between our probe and postgres binding it
        // (other test processes start clusters too): retry on a new one.
        for _ in 0..5 {
            match cluster.spawn_and_wait().await {
                Ok(()) => return cluster,
                Err(PortTaken) => {
                    cluster.stop(StopMode::Immediate).await;
                    cluster.port = free_port();
                }
            }
        }
        panic!(
            "onceq-testdb: could not find a free port for postgres after 5 tries\n{}",
            cluster.log()
        );
    }

    /// Starts a streaming standby of `primary` (which must allow
    /// replication connections from 127.0.0.1, as initdb's default
    /// `pg_hba.conf` does): `pg_basebackup -R` of it, served with
    /// `options`' settings and `cluster_name = name`, the name a primary's
    /// `synchronous_standby_names` lists.
    pub async fn start_standby(
        primary: &TestCluster,
        name: &str,
        options: ClusterOptions,
    ) -> TestCluster {
        Self::start_standby_on_port(primary, name, free_port(), options).await
    }

    /// [`start_standby`](Self::start_standby) on a given port, e.g. the one
    /// a dead primary served on: a harness that replaces the failed node
    /// keeps its clients' multi-host URLs unchanged across failovers. The
    /// port may still be held for a moment by the dead server's last
    /// processes, so binding is retried for a few seconds before giving up.
    pub async fn start_standby_on_port(
        primary: &TestCluster,
        name: &str,
        port: u16,
        mut options: ClusterOptions,
    ) -> TestCluster {
        let bindir = host::bindir();
        let run_as = RunAs::detect();
        let dir = make_cluster_dir(run_as);
        let mut cmd = run_as.command(&bindir.join("pg_basebackup"));
        cmd.args([
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-X",
            "stream",
            "-R",
            "--checkpoint=fast",
            "--no-sync",
        ])
        .arg("-p")
        .arg(primary.port.to_string())
        .arg("-D")
        .arg(dir.path().join("data"))
        .current_dir(dir.path());
        let out = tokio::task::spawn_blocking(move || cmd.output())
            .await
            .expect("join pg_basebackup")
            .unwrap_or_else(|e| panic!("onceq-testdb: run pg_basebackup: {e}"));
        assert!(
            out.status.success(),
            "onceq-testdb: pg_basebackup failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        options.settings.push(format!("cluster_name={name}"));
        write_setup(run_as, &dir.path().join("data"), &options);
        let cluster = TestCluster {
            dir,
            bindir,
            run_as,
            options,
            port,
            server: Mutex::new(None),
            databases: AtomicU64::new(0),
        };
        for _ in 0..20 {
            match cluster.spawn_and_wait().await {
                Ok(()) => return cluster,
                Err(PortTaken) => {
                    cluster.stop(StopMode::Immediate).await;
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
            }
        }
        panic!(
            "onceq-testdb: the standby's port {port} stayed taken\n{}",
            cluster.log()
        );
    }

    /// SIGKILLs the postmaster, as a crash of the machine's database would
    /// look from outside (its backends exit as they notice). [`stop`](Self::stop)
    /// and drop still clean up after it.
    pub fn kill_postmaster(&self) {
        let pid_file = self.data_dir().join("postmaster.pid");
        let pid = std::fs::read_to_string(&pid_file)
            .unwrap_or_else(|e| panic!("onceq-testdb: read {}: {e}", pid_file.display()));
        let pid = pid.lines().next().unwrap_or_default().trim().to_owned();
        let status = std::process::Command::new("kill")
            .args(["-KILL", &pid])
            .status()
            .expect("run kill");
        assert!(status.success(), "onceq-testdb: kill -KILL {pid} failed");
    }

    /// Freezes every process of the cluster (SIGSTOP to the postmaster and
    /// its children): connections stay open, the kernel still acknowledges
    /// TCP, nothing answers — a stalled database. [`thaw`](Self::thaw)
    /// resumes it.
    pub fn freeze(&self) {
        self.signal_all("-STOP");
    }

    /// Resumes a [`freeze`](Self::freeze)d cluster.
    pub fn thaw(&self) {
        self.signal_all("-CONT");
    }

    fn signal_all(&self, signal: &str) {
        let pid_file = self.data_dir().join("postmaster.pid");
        let pid = std::fs::read_to_string(&pid_file)
            .unwrap_or_else(|e| panic!("onceq-testdb: read {}: {e}", pid_file.display()));
        let pid = pid.lines().next().unwrap_or_default().trim().to_owned();
        let children = std::process::Command::new("pgrep")
            .args(["-P", &pid])
            .output()
            .expect("run pgrep");
        let mut pids: Vec<String> = String::from_utf8_lossy(&children.stdout)
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        // The postmaster first on the way down (so it starts no new
        // backend), last on the way up.
        if signal == "-STOP" {
            pids.insert(0, pid);
        } else {
            pids.push(pid);
        }
        let status = std::process::Command::new("kill")
            .arg(signal)
            .args(&pids)
            .status()
            .expect("run kill");
        assert!(
            status.success(),
            "onceq-testdb: kill {signal} {pids:?} failed"
        );
    }

    /// Promotes a standby (`pg_promote()`, waiting for it) so it accepts
    /// writes.
    pub async fn promote(&self) {
        let client = self
            .admin_client()
            .await
            .unwrap_or_else(|e| panic!("onceq-testdb: connect to the standby: {e}"));
        let promoted: bool = client
            .query_one("SELECT pg_promote(true, 60)", &[])
            .await
            .unwrap_or_else(|e| panic!("onceq-testdb: pg_promote: {e}"))
            .get(0);
        assert!(
            promoted,
            "onceq-testdb: the standby was not promoted within 60 s"
        );
    }

    /// Creates a database with this name (on a primary: its standbys get it too).
    pub async fn create_named_database(&self, name: &str) -> TestDatabase {
        let client = self
            .admin_client()
            .await
            .unwrap_or_else(|e| panic!("onceq-testdb: connect to the cluster: {e}"));
        client
            .batch_execute(&format!("CREATE DATABASE \"{name}\""))
            .await
            .unwrap_or_else(|e| panic!("onceq-testdb: CREATE DATABASE {name}: {e}"));
        TestDatabase {
            url: self.url(name),
            name: name.to_owned(),
        }
    }

    /// The TCP port on `127.0.0.1`.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `postgres://postgres@127.0.0.1:PORT/postgres` (trust auth).
    pub fn admin_url(&self) -> String {
        self.url("postgres")
    }

    /// The cluster directory (data directory, socket, log).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// What `postgres` has logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    /// Creates an empty database with a name unique in this cluster.
    pub async fn create_database(&self) -> TestDatabase {
        self.new_database("").await
    }

    /// Creates a database with a name unique in this cluster as a copy of
    /// `template`, to which nobody may be connected (see
    /// [`crate::database_from_template`]).
    pub async fn create_database_from(&self, template: &str) -> TestDatabase {
        self.new_database(&format!(" TEMPLATE \"{template}\""))
            .await
    }

    /// `CREATE DATABASE` of a new name, with `options`.
    async fn new_database(&self, options: &str) -> TestDatabase {
        let n = self.databases.fetch_add(1, Ordering::Relaxed);
        let name = format!("onceq_test_{n}");
        self.admin(&format!("CREATE DATABASE \"{name}\"{options}"))
            .await;
        TestDatabase {
            url: self.url(&name),
            name,
        }
    }

    /// Runs `sql` on the admin connection; panics (failing the test) if it
    /// fails.
    pub(crate) async fn admin(&self, sql: &str) {
        let client = self
            .admin_client()
            .await
            .unwrap_or_else(|e| panic!("onceq-testdb: connect to the cluster: {e}"));
        client
            .batch_execute(sql)
            .await
            .unwrap_or_else(|e| panic!("onceq-testdb: {sql}: {e}"));
    }

    /// Stops `postgres` and waits until it has exited. A no-op when stopped.
    pub async fn stop(&self, mode: StopMode) {
        let Some(mut child) = self.take_server() else {
            return;
        };
        if let Some(stdin) = child.stdin.as_mut() {
            // An error means the watchdog is gone already: nothing to stop.
            let _ = stdin.write_all(mode.line()).and_then(|()| stdin.flush());
        }
        tokio::task::spawn_blocking(move || child.wait())
            .await
            .expect("join the watchdog waiter")
            .expect("wait for the postgres watchdog");
    }

    /// Starts `postgres` again on the same port and data directory after
    /// [`stop`](Self::stop). A no-op when running.
    pub async fn restart_server(&self) {
        if self.server.lock().expect("server lock").is_some() {
            return;
        }
        if let Err(PortTaken) = self.spawn_and_wait().await {
            panic!(
                "onceq-testdb: port {} was taken while postgres was stopped\n{}",
                self.port,
                self.log()
            );
        }
    }

    /// `postgres://postgres@127.0.0.1:PORT/DATABASE` (trust auth).
    pub fn url_of(&self, database: &str) -> String {
        self.url(database)
    }

    pub(crate) fn url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }

    fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("postgres.log")
    }

    fn take_server(&self) -> Option<Child> {
        self.server.lock().expect("server lock").take()
    }

    /// Over the unix socket, so that we can only ever reach our own server
    /// (a TCP port might, after a race, belong to someone else's).
    pub(crate) async fn admin_client(
        &self,
    ) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
        let (client, connection) = tokio_postgres::Config::new()
            .host_path(self.dir.path())
            .port(self.port)
            .user("postgres")
            .dbname("postgres")
            .connect_timeout(Duration::from_secs(2))
            .connect(tokio_postgres::NoTls)
            .await?;
        tokio::spawn(connection);
        Ok(client)
    }

    async fn spawn_and_wait(&self) -> Result<(), PortTaken> {
        let mut cmd = self.run_as.command(Path::new("sh"));
        cmd.arg("-c")
            .arg(WATCHDOG)
            .arg("onceq-testdb-watchdog")
            .arg(self.bindir.join("postgres"))
            .arg(self.data_dir())
            .arg(self.dir.path())
            .arg(self.port.to_string())
            .arg(self.log_path())
            .arg(self.dir.path());
        let mut settings = vec![
            "listen_addresses=127.0.0.1",
            "max_connections=200",
            // Tests and benchmarks read the log on failure; keep it in one file.
            "logging_collector=off",
        ];
        if !self.options.durable {
            // Safe against a crash of postgres (an immediate stop), which is
            // what tests simulate; only a crash of the machine could lose
            // data. Not `synchronous_commit=off`: it leaves recent commits
            // in shared memory, so an immediate stop would lose committed
            // transactions, and with fsync off a WAL flush is just a cheap
            // write() anyway.
            settings.extend(["fsync=off", "full_page_writes=off"]);
        }
        for s in settings
            .into_iter()
            .chain(self.options.settings.iter().map(String::as_str))
        {
            cmd.arg("-c").arg(s);
        }
        cmd.current_dir(self.dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let log_len_before = self.log().len();
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("onceq-testdb: spawn the postgres watchdog: {e}"));
        *self.server.lock().expect("server lock") = Some(child);

        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if self.admin_client().await.is_ok() {
                return Ok(());
            }
            let log = self.log();
            let this_run = log.get(log_len_before..).unwrap_or(&log);
            if this_run.contains("could not create any TCP/IP sockets") {
                return Err(PortTaken);
            }
            if Instant::now() > deadline {
                panic!(
                    "onceq-testdb: postgres did not accept connections within {READY_TIMEOUT:?} \
                     (dir {}). Its log:\n{log}",
                    self.dir.path().display()
                );
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}

impl Drop for TestCluster {
    fn drop(&mut self) {
        if let Some(mut child) = self.take_server() {
            // End of file: the watchdog stops postgres at once and removes
            // the directory; wait so the directory is really gone.
            drop(child.stdin.take());
            let _ = child.wait();
        }
        // TempDir's own drop removes whatever is left (e.g. when stopped).
    }
}

/// `postgres` could not bind its port.
struct PortTaken;

fn make_cluster_dir(run_as: RunAs) -> tempfile::TempDir {
    let parent = Path::new(PARENT_DIR);
    std::fs::create_dir_all(parent)
        .unwrap_or_else(|e| panic!("onceq-testdb: create {PARENT_DIR}: {e}"));
    // Sticky and world-writable like /tmp: every user's test processes share
    // the parent, and a watchdog running as `postgres` may remove its own
    // cluster directory. Failing is fine when someone else owns the parent.
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(parent, std::fs::Permissions::from_mode(0o1777));
    }
    let dir = tempfile::Builder::new()
        .prefix("cluster-")
        .tempdir_in(parent)
        .unwrap_or_else(|e| panic!("onceq-testdb: create a directory in {PARENT_DIR}: {e}"));
    run_as.give(dir.path());
    dir
}

async fn init_data_dir(bindir: &Path, run_as: RunAs, dir: &Path) {
    let mut cmd = run_as.command(&bindir.join("initdb"));
    cmd.arg("-D")
        .arg(dir.join("data"))
        .args([
            "-U",
            "postgres",
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--locale=C",
            // Nothing here needs to survive a power cut of the machine.
            "--no-sync",
        ])
        .current_dir(dir);
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("join initdb")
        .unwrap_or_else(|e| panic!("onceq-testdb: run initdb: {e}"));
    assert!(
        out.status.success(),
        "onceq-testdb: initdb failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Writes `options`' files and `pg_hba.conf` into the data directory.
fn write_setup(run_as: RunAs, data: &Path, options: &ClusterOptions) {
    use std::os::unix::fs::PermissionsExt;
    let mut files: Vec<(String, Vec<u8>)> = options.files.clone();
    if let Some(hba) = &options.hba {
        files.push((
            "pg_hba.conf".into(),
            format!("local all all trust\n{hba}\n").into_bytes(),
        ));
    }
    for (name, bytes) in files {
        let path = data.join(&name);
        std::fs::write(&path, bytes)
            .unwrap_or_else(|e| panic!("onceq-testdb: write {}: {e}", path.display()));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
            .unwrap_or_else(|e| panic!("onceq-testdb: chmod {}: {e}", path.display()));
        run_as.give(&path);
    }
}

/// A port nobody listens on right now (the OS picks it).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("onceq-testdb: find a free port: {e}"))
}
