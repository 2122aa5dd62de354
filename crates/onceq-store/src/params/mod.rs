//! One params struct per store operation, and what each returns.
//!
//! Every struct carries `now`: the store never reads a clock of its own.
//! One module per concept, all re-exported here:
//! - `batch`: the batch forms of ack, nack, cancel, delete and redrive
//! - `keys`
//! - `queues`
//! - `messages`
//! - `maintenance`
//! - `observation`
//! - `browse`
//! - `finished`: the kept finished messages, listed
//! - `subscriptions`
//! - `triage`
//! - `cron`
//! - `webhooks`
//! - `ledger`

/// Names a queue inside a project.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct QueueRef {
    /// The owning project.
    pub project: String,
    /// The queue's name.
    pub queue: String,
}

impl QueueRef {
    /// Shorthand constructor.
    pub fn new(project: impl Into<String>, queue: impl Into<String>) -> Self {
        Self {
            project: project.into(),
            queue: queue.into(),
        }
    }
}

mod batch;
mod browse;
mod cron;
mod finished;
mod keys;
mod ledger;
mod maintenance;
mod messages;
mod observation;
mod queues;
mod subscriptions;
mod triage;
mod webhooks;

pub use batch::*;
pub use browse::*;
pub use cron::*;
pub use finished::*;
pub use keys::*;
pub use ledger::*;
pub use maintenance::*;
pub use messages::*;
pub use observation::*;
pub use queues::*;
pub use subscriptions::*;
pub use triage::*;
pub use webhooks::*;
