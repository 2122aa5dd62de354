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

pub(crate) mod setup;
mod signals;
mod standby;

pub use setup::ClusterOptions;
use setup::{free_port, init_data_dir, make_cluster_dir, write_setup};

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
        // A free port can be taken between our probe and postgres binding it
        // (other test processes start clusters too): retry on a new one.
        Self::launch(dir, options, None).await
    }

    /// Serves the data directory in `dir` (made, set up by `options` here),
    /// on `port` — retried a few seconds while it is taken — or on a free
    /// port, a new one each try.
    async fn launch(
        dir: tempfile::TempDir,
        options: ClusterOptions,
        port: Option<u16>,
    ) -> TestCluster {
        let run_as = RunAs::detect();
        write_setup(run_as, &dir.path().join("data"), &options);
        let mut cluster = TestCluster {
            dir,
            bindir: host::bindir(),
            run_as,
            options,
            port: port.unwrap_or_else(free_port),
            server: Mutex::new(None),
            databases: AtomicU64::new(0),
        };
        for _ in 0..20 {
            match cluster.spawn_and_wait().await {
                Ok(()) => return cluster,
                Err(PortTaken) => {
                    cluster.stop(StopMode::Immediate).await;
                    match port {
                        None => cluster.port = free_port(),
                        Some(_) => tokio::time::sleep(Duration::from_millis(250)).await,
                    }
                }
            }
        }
        panic!(
            "onceq-testdb: port {} stayed taken for postgres\n{}",
            cluster.port,
            cluster.log()
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
