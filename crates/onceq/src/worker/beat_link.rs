//! The heartbeat's own database connection, outside the pool.
//!
//! Every running job holds a pool connection for its transaction, so with
//! `concurrency` at the pool's size a heartbeat that waited for a pooled
//! connection would wait for a job to end — and no lease would be pushed
//! again (16 of 16 leases were lost that way at `--concurrency 16` on a
//! 16-connection pool). The link is opened with the pool's own manager (its
//! settings, TLS included) but is not counted in the pool's size; one
//! connection carries every job's heartbeat (tokio-postgres pipelines
//! concurrent queries on it), and a closed one is reopened on the next beat.

use std::sync::Arc;

use deadpool_postgres::{ClientWrapper, Manager, Pool};
use tokio::sync::Mutex;

/// One connection shared by the heartbeats of a worker's jobs.
pub(crate) struct BeatLink {
    pool: Pool,
    open: Mutex<Option<Arc<ClientWrapper>>>,
}

impl BeatLink {
    /// A link that opens its connection through `pool`'s manager on first use.
    pub fn new(pool: Pool) -> Self {
        Self {
            pool,
            open: Mutex::new(None),
        }
    }

    /// The open connection, or a new one when there is none or it closed.
    /// Opening is bounded by the pool's `connect_timeout`.
    pub async fn get(&self) -> Result<Arc<ClientWrapper>, tokio_postgres::Error> {
        let mut open = self.open.lock().await;
        if let Some(link) = open.as_ref().filter(|c| !c.is_closed()) {
            return Ok(link.clone());
        }
        let manager: &Manager = self.pool.manager();
        let link = Arc::new(deadpool::managed::Manager::create(manager).await?);
        *open = Some(link.clone());
        Ok(link)
    }
}
