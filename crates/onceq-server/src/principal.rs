//! [`Principal`]: the key a request acts as, once authenticated, and the
//! one place its scope is checked. The API's [`Caller`](crate::caller::Caller)
//! and the dashboard's [`Viewer`](crate::dashboard::session::Viewer) both
//! hold one; each only words its own refusal (the API answers 403 for a
//! queue the key may not use, the dashboard "not found", so a scoped key
//! learns nothing about other queues there).

use onceq_store::{KeyRecord, QueueRef};
use onceq_types::scope::{Action, KeyScope};

/// An authenticated key: its project (every queue it touches is scoped to
/// it) and what it may do.
#[derive(Debug, Clone)]
pub struct Principal {
    /// The project.
    pub project: String,
    /// The key's public id.
    pub key_id: String,
    /// What the key may do, and on which queues.
    pub scope: KeyScope,
}

impl Principal {
    /// The principal of a stored key.
    pub fn new(record: KeyRecord) -> Self {
        Self {
            project: record.project,
            key_id: record.key_id,
            scope: record.scope,
        }
    }

    /// Whether the key's queue patterns allow `name`.
    pub fn may_use(&self, name: &str) -> bool {
        self.scope.queues.matches(name)
    }

    /// The queue `name` of the key's project, if its patterns allow it.
    pub fn queue_ref(&self, name: &str) -> Option<QueueRef> {
        self.may_use(name)
            .then(|| QueueRef::new(&self.project, name))
    }

    /// Whether the key's actions include `action`.
    pub fn allows(&self, action: Action) -> bool {
        self.scope.actions.allows(action)
    }
}
