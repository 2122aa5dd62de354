//! The queue ids a group commit remembers, so that most groups need no
//! lookup.

use std::collections::HashMap;

use onceq_types::QueueType;

use super::Pending;

/// Queue ids and types by (project, name).
pub(super) type QueueIds = HashMap<(String, String), (i64, QueueType)>;

/// Queues recently published to, so that a group need not look them up.
/// Safe to be stale: a queue's id and type never change (a queue deleted
/// and created again gets a new id), and a message or key written under a
/// deleted queue's id is not stored (each statement's probe of the queue
/// returns nothing), which fails the group, clears the cache and retries.
#[derive(Default)]
pub(super) struct QueueCache {
    ids: std::sync::Mutex<QueueIds>,
}

/// Queues remembered at most; beyond, the cache starts over.
const CACHED_QUEUES: usize = 10_000;

impl QueueCache {
    /// The ids of every queue of `group`, if all are known.
    pub(super) fn get(&self, group: &[Pending]) -> Option<QueueIds> {
        let ids = self.ids.lock().unwrap_or_else(|e| e.into_inner());
        let mut found = QueueIds::new();
        for pending in group {
            let key = (
                pending.p.queue.project.clone(),
                pending.p.queue.queue.clone(),
            );
            let id = *ids.get(&key)?;
            found.insert(key, id);
        }
        Some(found)
    }

    /// Remembers `found`, queues that exist (committed).
    pub(super) fn put(&self, found: &QueueIds) {
        let mut ids = self.ids.lock().unwrap_or_else(|e| e.into_inner());
        if ids.len() + found.len() > CACHED_QUEUES {
            ids.clear();
        }
        ids.extend(found.iter().map(|(k, v)| (k.clone(), *v)));
    }

    /// Forgets every queue (one may have been deleted).
    pub(super) fn clear(&self) {
        self.ids.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}
