//! [`Listeners`]: which event types each project's webhooks receive, cached
//! per server so that emitting an event nobody listens to costs a map
//! lookup, never a statement.
//!
//! Refreshed from the store (`Store::webhook_scan`, one query) by the
//! dispatcher every `--push-scan-ms` and at once by `register` and `delete`
//! on this server; a webhook registered or deleted on another server
//! sharing the database is seen within one scan interval (1 s by default).
//! Until this server's first refresh (at start) it knows no webhooks.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock};

use onceq_store::WebhookRecord;
use onceq_types::webhook::ALL_EVENTS;

/// The cache (see the module doc).
#[derive(Debug, Default)]
pub struct Listeners {
    by_project: RwLock<Arc<HashMap<String, HashSet<String>>>>,
}

impl Listeners {
    /// Whether some webhook of `project` receives events of type `kind`.
    pub fn wants(&self, project: &str, kind: &str) -> bool {
        let map = self.by_project.read().unwrap_or_else(|e| e.into_inner());
        match map.get(project) {
            None => false,
            Some(kinds) => kinds.contains(kind) || kinds.contains(ALL_EVENTS),
        }
    }

    /// Whether no project has a webhook (as of the last refresh).
    pub fn is_empty(&self) -> bool {
        self.by_project
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
    }

    /// Replaces the cache with what `webhooks` (every webhook of every
    /// project) listen to.
    pub fn replace(&self, webhooks: &[WebhookRecord]) {
        let mut map: HashMap<String, HashSet<String>> = HashMap::new();
        for w in webhooks {
            map.entry(w.project.clone())
                .or_default()
                .extend(w.events.iter().cloned());
        }
        *self.by_project.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(map);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(project: &str, events: &[&str]) -> WebhookRecord {
        WebhookRecord {
            webhook_id: "whk_1".into(),
            project: project.into(),
            url: "https://h/".into(),
            events: events.iter().map(|e| (*e).into()).collect(),
            secret: "s".repeat(16),
            description: String::new(),
            headers: None,
            created_at: jiff::Timestamp::UNIX_EPOCH,
        }
    }

    #[test]
    fn wants_what_some_webhook_of_the_project_names() {
        let l = Listeners::default();
        assert!(!l.wants("p", "queue.created"));
        l.replace(&[hook("p", &["queue.created"]), hook("q", &["*"])]);
        assert!(l.wants("p", "queue.created"));
        assert!(!l.wants("p", "queue.deleted"));
        assert!(l.wants("q", "queue.deleted"));
        assert!(!l.wants("r", "queue.created"));
        assert!(!l.is_empty());
        l.replace(&[]);
        assert!(!l.wants("q", "queue.deleted"));
        assert!(l.is_empty());
    }
}
