//! Accounts: metering, credit limits and rate limits, all held in memory
//! per server process so that no request pays a database round trip for
//! them (the key lookup of [`crate::guard`] is the only one).
//!
//! - [`ledger`]: usage buckets and credit reservations.
//! - [`limiter`]: token buckets per key and per project.
//!
//! The account sync ([`crate::maintenance::account_sync`]) writes the
//! usage, records this server's heartbeat and re-reads the projects'
//! limits about once a second. docs/security.md states what that means for
//! several servers sharing a database.

pub mod ledger;
pub mod limiter;

pub use ledger::Ledger;
pub use limiter::Limiter;

/// What a server process knows about usage and limits.
#[derive(Debug)]
pub struct Accounts {
    /// Usage and credit.
    pub ledger: Ledger,
    /// Rate limits.
    pub limiter: Limiter,
    /// This process's id in the heartbeat table.
    pub server_id: String,
    /// Held for writing while a usage write is in progress, for reading by
    /// the account endpoints: they read the store and the unwritten usage
    /// under it, so a bucket is never counted twice nor missed.
    pub(crate) flush_gate: tokio::sync::RwLock<()>,
    /// One sync pass at a time: a pass's refresh must never be overtaken
    /// by an older pass's (the background loop and a test, or shutdown).
    pub(crate) sync_lock: tokio::sync::Mutex<()>,
}

impl Default for Accounts {
    fn default() -> Self {
        Self {
            ledger: Ledger::default(),
            limiter: Limiter::default(),
            server_id: format!("srv_{}", uuid::Uuid::new_v4().simple()),
            flush_gate: tokio::sync::RwLock::new(()),
            sync_lock: tokio::sync::Mutex::new(()),
        }
    }
}
