//! The run's PostgreSQL: one throwaway cluster, a database for the queue
//! servers and one for the exports app, and a direct connection for the
//! sampler and the checker (never through a proxy: they must see the truth).

use std::time::Duration;

use onceq_testdb::{StopMode, TestCluster};

/// The cluster and its two databases.
pub struct Cluster {
    /// The cluster itself (stop/restart for faults).
    pub pg: TestCluster,
    /// The queue servers' database.
    pub queue_url: String,
    /// The app's database (ledger, job facts, exports).
    pub app_url: String,
}

impl Cluster {
    /// Starts PostgreSQL and creates both databases.
    pub async fn start() -> Cluster {
        let pg = TestCluster::start().await;
        let queue_url = pg.create_database().await.url;
        let app_url = pg.create_database().await.url;
        Cluster {
            pg,
            queue_url,
            app_url,
        }
    }

    /// The TCP port PostgreSQL listens on.
    pub fn port(&self) -> u16 {
        self.pg.port()
    }

    /// Stops PostgreSQL in `mode`, waits `pause`, starts it again.
    pub async fn restart(&self, mode: StopMode, pause: Duration) {
        self.pg.stop(mode).await;
        tokio::time::sleep(pause).await;
        self.pg.restart_server().await;
    }
}

/// A direct connection to `url`, retried until `within` has passed (the
/// cluster may be restarting).
pub async fn connect(url: &str, within: Duration) -> anyhow::Result<tokio_postgres::Client> {
    let deadline = tokio::time::Instant::now() + within;
    let pg = onceq_pg::PgConnect::parse(url)?;
    loop {
        match pg.connect().await {
            Ok(client) => return Ok(client),
            Err(e) if tokio::time::Instant::now() >= deadline => {
                return Err(anyhow::anyhow!("connect to {url}: {e}"));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}
