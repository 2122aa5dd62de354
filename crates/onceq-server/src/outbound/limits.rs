//! [`Limits`]: the caps on outbound deliveries open at once (per project,
//! per destination, per process; see [`OutboundLimits`]) and what they
//! count for `/metrics`.
//!
//! A [`Permit`] holds one permit of each cap, taken in the order project,
//! destination, process. That order is what keeps a bad receiver or a
//! greedy tenant to itself: a delivery waiting for a hung destination holds
//! only its own project's permit (never a shared one), and a delivery
//! waiting for the process's cap already holds its project's, so one
//! project queues at most its cap's worth of waiters there (tokio's
//! semaphores are first come, first served), and any other project's
//! delivery is among the next ones served.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError};

use super::config::OutboundLimits;

/// What a delivery is for (the `kind` label of the in-flight gauge).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A push subscription's delivery.
    Push,
    /// An account webhook's attempt.
    Webhook,
    /// A cron task schedule's run (delivered through its push subscription).
    Cron,
}

impl Kind {
    const ALL: [Kind; 3] = [Kind::Push, Kind::Webhook, Kind::Cron];

    /// Its label value.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Push => "push",
            Kind::Webhook => "webhook",
            Kind::Cron => "cron",
        }
    }
}

/// Which cap made a delivery wait (the `cap` label of the deferrals).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cap {
    /// `max_per_project`.
    Project,
    /// `max_per_destination`.
    Destination,
    /// `max_in_flight`.
    Process,
    /// `webhook_max_per_project` (counted once per claim a project had no
    /// room in).
    WebhookProject,
}

impl Cap {
    const ALL: [Cap; 4] = [
        Cap::Project,
        Cap::Destination,
        Cap::Process,
        Cap::WebhookProject,
    ];

    /// Its label value.
    pub fn name(self) -> &'static str {
        match self {
            Cap::Project => "project",
            Cap::Destination => "destination",
            Cap::Process => "process",
            Cap::WebhookProject => "webhook_project",
        }
    }
}

/// The caps of one process. Shared (`Arc`) by every delivery.
#[derive(Debug)]
pub struct Limits {
    config: OutboundLimits,
    process: Arc<Semaphore>,
    projects: Mutex<HashMap<String, Arc<Semaphore>>>,
    destinations: Mutex<HashMap<String, Arc<Semaphore>>>,
    in_flight: [AtomicI64; 3],
    deferred: [AtomicU64; 4],
}

/// Room for one delivery under every cap; freed when dropped.
#[derive(Debug)]
pub struct Permit {
    limits: Arc<Limits>,
    kind: Kind,
    project: String,
    destination: String,
    held: Option<[OwnedSemaphorePermit; 3]>,
}

impl Limits {
    /// Caps as `config` sets them (a 0 is taken as 1: a cap of nothing
    /// would stop every delivery, which is `--push-*`'s job, not this).
    pub fn new(config: OutboundLimits) -> Arc<Self> {
        let config = OutboundLimits {
            max_in_flight: config.max_in_flight.max(1),
            max_per_project: config.max_per_project.max(1),
            max_per_destination: config.max_per_destination.max(1),
            webhook_max_in_flight: config.webhook_max_in_flight.max(1),
            webhook_max_per_project: config.webhook_max_per_project.max(1),
        };
        Arc::new(Self {
            process: Arc::new(Semaphore::new(config.max_in_flight)),
            config,
            projects: Mutex::default(),
            destinations: Mutex::default(),
            in_flight: Default::default(),
            deferred: Default::default(),
        })
    }

    /// The caps in force.
    pub fn config(&self) -> &OutboundLimits {
        &self.config
    }

    /// Waits for room for one delivery of `kind` by `project` to
    /// `destination` (see the module doc for the order); each cap that
    /// makes it wait counts one deferral.
    pub async fn acquire(self: &Arc<Self>, kind: Kind, project: &str, destination: &str) -> Permit {
        let p = self.take(Cap::Project, self.project(project)).await;
        let d = self
            .take(Cap::Destination, self.destination(destination))
            .await;
        let g = self.take(Cap::Process, self.process.clone()).await;
        self.permit(kind, project, destination, [p, d, g])
    }

    /// Room for one more delivery now, or `None` (nothing counted: the
    /// caller already holds one and only asks whether to take another).
    pub fn try_acquire(
        self: &Arc<Self>,
        kind: Kind,
        project: &str,
        destination: &str,
    ) -> Option<Permit> {
        let p = self.project(project).try_acquire_owned().ok()?;
        let d = self.destination(destination).try_acquire_owned().ok()?;
        let g = self.process.clone().try_acquire_owned().ok()?;
        Some(self.permit(kind, project, destination, [p, d, g]))
    }

    /// How many deliveries `project` has open now.
    pub fn project_busy(&self, project: &str) -> usize {
        let projects = self.projects.lock().unwrap_or_else(|e| e.into_inner());
        projects.get(project).map_or(0, |s| {
            self.config.max_per_project - s.available_permits().min(self.config.max_per_project)
        })
    }

    /// The projects with deliveries open now, each with how many.
    pub fn busy_projects(&self) -> Vec<(String, usize)> {
        let cap = self.config.max_per_project;
        let projects = self.projects.lock().unwrap_or_else(|e| e.into_inner());
        projects
            .iter()
            .map(|(p, s)| (p.clone(), cap - s.available_permits().min(cap)))
            .filter(|(_, n)| *n > 0)
            .collect()
    }

    /// Free room under the process's cap.
    pub fn process_free(&self) -> usize {
        self.process.available_permits()
    }

    /// Counts a deferral by `cap` (for caps enforced elsewhere: the
    /// webhook dispatcher's).
    pub fn deferred(&self, cap: Cap) {
        self.deferred[cap as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// Deliveries open now, by kind.
    pub fn in_flight(&self) -> impl Iterator<Item = (Kind, i64)> + '_ {
        Kind::ALL
            .into_iter()
            .map(|k| (k, self.in_flight[k as usize].load(Ordering::Relaxed)))
    }

    /// Deferrals so far, by cap.
    pub fn deferrals(&self) -> impl Iterator<Item = (Cap, u64)> + '_ {
        Cap::ALL
            .into_iter()
            .map(|c| (c, self.deferred[c as usize].load(Ordering::Relaxed)))
    }

    async fn take(&self, cap: Cap, sem: Arc<Semaphore>) -> OwnedSemaphorePermit {
        match sem.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(TryAcquireError::NoPermits) => {
                self.deferred(cap);
                sem.acquire_owned().await.expect("never closed")
            }
            Err(TryAcquireError::Closed) => unreachable!("never closed"),
        }
    }

    fn permit(
        self: &Arc<Self>,
        kind: Kind,
        project: &str,
        destination: &str,
        held: [OwnedSemaphorePermit; 3],
    ) -> Permit {
        self.in_flight[kind as usize].fetch_add(1, Ordering::Relaxed);
        Permit {
            limits: self.clone(),
            kind,
            project: project.to_owned(),
            destination: destination.to_owned(),
            held: Some(held),
        }
    }

    fn project(&self, project: &str) -> Arc<Semaphore> {
        entry(&self.projects, project, self.config.max_per_project)
    }

    fn destination(&self, destination: &str) -> Arc<Semaphore> {
        entry(
            &self.destinations,
            destination,
            self.config.max_per_destination,
        )
    }
}

/// The semaphore of `key`, made on first use.
fn entry(map: &Mutex<HashMap<String, Arc<Semaphore>>>, key: &str, cap: usize) -> Arc<Semaphore> {
    let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
    map.entry(key.to_owned())
        .or_insert_with(|| Arc::new(Semaphore::new(cap)))
        .clone()
}

/// Forgets `key`'s semaphore once nothing holds or waits for it, so the
/// maps stay as small as the projects and destinations in use.
fn forget(map: &Mutex<HashMap<String, Arc<Semaphore>>>, key: &str) {
    let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
    if map.get(key).is_some_and(|s| Arc::strong_count(s) == 1) {
        map.remove(key);
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        drop(self.held.take());
        self.limits.in_flight[self.kind as usize].fetch_sub(1, Ordering::Relaxed);
        forget(&self.limits.projects, &self.project);
        forget(&self.limits.destinations, &self.destination);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(process: usize, project: usize, destination: usize) -> Arc<Limits> {
        Limits::new(OutboundLimits {
            max_in_flight: process,
            max_per_project: project,
            max_per_destination: destination,
            ..OutboundLimits::default()
        })
    }

    #[tokio::test]
    async fn each_cap_bounds_and_frees() {
        let l = limits(3, 2, 2);
        let a1 = l.try_acquire(Kind::Push, "a", "x:1").unwrap();
        let _a2 = l.try_acquire(Kind::Push, "a", "y:1").unwrap();
        assert!(
            l.try_acquire(Kind::Push, "a", "z:1").is_none(),
            "project cap"
        );
        let _b1 = l.try_acquire(Kind::Webhook, "b", "x:1").unwrap();
        assert!(
            l.try_acquire(Kind::Push, "c", "x:1").is_none(),
            "destination cap"
        );
        assert!(
            l.try_acquire(Kind::Push, "c", "w:1").is_none(),
            "process cap"
        );
        assert_eq!(l.project_busy("a"), 2);
        drop(a1);
        assert_eq!(l.project_busy("a"), 1);
        let _c = l.try_acquire(Kind::Cron, "c", "w:1").unwrap();
        let counts: Vec<i64> = l.in_flight().map(|(_, n)| n).collect();
        assert_eq!(counts, [1, 1, 1]);
    }

    #[tokio::test]
    async fn a_waiter_counts_a_deferral_and_gets_the_freed_room() {
        let l = limits(10, 1, 10);
        let held = l.try_acquire(Kind::Push, "a", "x:1").unwrap();
        let waiting = tokio::spawn({
            let l = l.clone();
            async move { l.acquire(Kind::Push, "a", "x:1").await }
        });
        // The waiter counts its deferral before it parks.
        while l.deferrals().next().unwrap().1 == 0 {
            tokio::task::yield_now().await;
        }
        drop(held);
        let got = waiting.await.unwrap();
        assert_eq!(l.project_busy("a"), 1);
        drop(got);
        assert_eq!(l.project_busy("a"), 0);
        assert!(
            l.projects.lock().unwrap().is_empty(),
            "unused entries forgotten"
        );
    }
}
