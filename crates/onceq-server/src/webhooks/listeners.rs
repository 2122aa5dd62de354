//! [`Listeners`]: which event types each project's webhooks receive, cached
//! per server so that emitting an event nobody listens to costs a map
//! lookup, never a statement.
//!
//! Refreshed from the store (`Store::webhook_scan`, one query) by the
//! dispatcher every `--push-scan-ms` and at once by `register` and `delete`
//! on this server; a webhook registered or deleted on another server
//! sharing the database is seen within one scan interval (1 s by default).
//! Until this server's first refresh (at start) it knows no webhooks.
//!
//! Refreshes overlap (the dispatcher's timer beside a `register`), and a
//! scan that began before a webhook was stored must not replace one that
//! began after: a dispatcher scan that read the webhooks just before a
//! `register` stored one, and answered after that register's own refresh,
//! left the cache without the new webhook, whose events were then never
//! recorded. So each refresh is numbered
//! before it reads, and only a newer one replaces the cache.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use onceq_store::{Store, WebhookRecord};
use onceq_types::webhook::ALL_EVENTS;

/// The cache (see the module doc).
#[derive(Debug, Default)]
pub struct Listeners {
    cached: RwLock<Cached>,
    /// Refreshes begun.
    scans: AtomicU64,
}

#[derive(Debug, Default)]
struct Cached {
    /// The number of the refresh it came from.
    scan: u64,
    by_project: Arc<HashMap<String, HashSet<String>>>,
}

impl Listeners {
    /// Whether some webhook of `project` receives events of type `kind`.
    pub fn wants(&self, project: &str, kind: &str) -> bool {
        let cached = self.cached.read().unwrap_or_else(|e| e.into_inner());
        match cached.by_project.get(project) {
            None => false,
            Some(kinds) => kinds.contains(kind) || kinds.contains(ALL_EVENTS),
        }
    }

    /// Whether no project has a webhook (as of the last refresh).
    pub fn is_empty(&self) -> bool {
        self.cached
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .by_project
            .is_empty()
    }

    /// Reads every webhook from `store` and caches what they listen to,
    /// unless a refresh begun after this one has already (see the module
    /// doc).
    pub async fn refresh(&self, store: &dyn Store) -> onceq_store::Result<()> {
        let scan = self.begin();
        let webhooks = store.webhook_scan().await?;
        self.replace(scan, &webhooks);
        Ok(())
    }

    /// The number of a refresh about to read.
    fn begin(&self) -> u64 {
        self.scans.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// What `webhooks` (every webhook of every project) listen to, read by
    /// refresh number `scan`, becomes the cache if no later refresh's has.
    fn replace(&self, scan: u64, webhooks: &[WebhookRecord]) {
        let mut map: HashMap<String, HashSet<String>> = HashMap::new();
        for w in webhooks {
            map.entry(w.project.clone())
                .or_default()
                .extend(w.events.iter().cloned());
        }
        let mut cached = self.cached.write().unwrap_or_else(|e| e.into_inner());
        if scan > cached.scan {
            *cached = Cached {
                scan,
                by_project: Arc::new(map),
            };
        }
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
        l.replace(
            l.begin(),
            &[hook("p", &["queue.created"]), hook("q", &["*"])],
        );
        assert!(l.wants("p", "queue.created"));
        assert!(!l.wants("p", "queue.deleted"));
        assert!(l.wants("q", "queue.deleted"));
        assert!(!l.wants("r", "queue.created"));
        assert!(!l.is_empty());
        l.replace(l.begin(), &[]);
        assert!(!l.wants("q", "queue.deleted"));
        assert!(l.is_empty());
    }

    #[test]
    fn a_refresh_that_began_earlier_never_replaces_a_later_ones() {
        let l = Listeners::default();
        // The dispatcher's scan begins, then a register's, which sees the
        // new webhook and answers first.
        let (timer, register) = (l.begin(), l.begin());
        l.replace(register, &[hook("p", &["queue.created"])]);
        l.replace(timer, &[]);
        assert!(l.wants("p", "queue.created"));
        // The next one replaces it.
        l.replace(l.begin(), &[]);
        assert!(l.is_empty());
    }
}
