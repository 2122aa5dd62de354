//! Failures that stop a worker call (a single job's failure never does: it
//! is nacked and counted instead).

/// Why [`Worker::new`](super::Worker::new), [`run`](super::Worker::run),
/// [`run_once`](super::Worker::run_once) or [`drain`](super::Worker::drain)
/// returned an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkerError {
    /// The queue server refused or did not answer. `run` only returns this
    /// for answers a retry cannot fix (bad key, bad parameters); it backs
    /// off and retries the others.
    #[error("queue: {0}")]
    Queue(#[from] crate::Error),
    /// The application database failed (creating the facts table).
    #[error("database: {0}")]
    Database(#[from] tokio_postgres::Error),
    /// No connection from the pool.
    #[error("database pool: {0}")]
    Pool(#[from] deadpool_postgres::PoolError),
    /// The configuration cannot work; the message says which field.
    #[error("worker configuration: {0}")]
    Config(String),
}
