//! The caps on long polls waiting at once, per key and per project.
//!
//! A `consume` with `wait_seconds > 0` takes a place here for as long as
//! it may wait; past a cap it is answered 429 `RATE_LIMITED` with
//! `Retry-After: 1` before anything is done (its `acks` not applied: the
//! same call may be sent again). Why a refusal and not an immediate empty
//! answer: an empty answer looks like "no work" and invites a client to
//! poll again at once, so a fleet over its cap would spin (each spin a
//! store claim) instead of backing off; a 429 is what Infrai clients
//! already back off on, and says why. A call with `wait_seconds: 0` never
//! waits and is never refused here.
//!
//! The places are counted in this process: with several servers, each
//! allows the caps (a load balancer spreads a fleet over them).

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
};

use crate::ApiError;

/// Which cap refused a long poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cap {
    /// `--long-poll-max-per-key`.
    Key,
    /// `--long-poll-max-per-project`.
    Project,
}

impl Cap {
    /// Its label in `/metrics`.
    pub fn name(self) -> &'static str {
        match self {
            Cap::Key => "key",
            Cap::Project => "project",
        }
    }
}

/// The long polls waiting in this process, by key and by project.
#[derive(Debug)]
pub struct LongPolls {
    max_per_key: usize,
    max_per_project: usize,
    waiting: Mutex<Waiting>,
    refused: [AtomicU64; 2],
}

#[derive(Debug, Default)]
struct Waiting {
    total: usize,
    by_key: HashMap<String, usize>,
    by_project: HashMap<String, usize>,
}

impl LongPolls {
    /// Caps of `max_per_key` and `max_per_project` waiting polls (0: none).
    pub fn new(max_per_key: usize, max_per_project: usize) -> Arc<Self> {
        let unbounded = |n: usize| if n == 0 { usize::MAX } else { n };
        Arc::new(Self {
            max_per_key: unbounded(max_per_key),
            max_per_project: unbounded(max_per_project),
            waiting: Mutex::default(),
            refused: Default::default(),
        })
    }

    /// A place for a long poll of `key_id` in `project`, held until the
    /// returned guard is dropped; the 429 to answer past a cap.
    pub fn enter(self: &Arc<Self>, key_id: &str, project: &str) -> Result<Place, ApiError> {
        let mut w = self.lock();
        let (per_key, per_project) = (
            w.by_key.get(key_id).copied().unwrap_or(0),
            w.by_project.get(project).copied().unwrap_or(0),
        );
        let over = if per_key >= self.max_per_key {
            Some((Cap::Key, self.max_per_key, "this API key"))
        } else if per_project >= self.max_per_project {
            Some((Cap::Project, self.max_per_project, "this project"))
        } else {
            None
        };
        if let Some((cap, max, whose)) = over {
            self.refused[cap as usize].fetch_add(1, Ordering::Relaxed);
            return Err(ApiError::rate_limited(
                1,
                format!("{whose} already has {max} long polls waiting (wait_seconds > 0), the most it may have at once; retry after 1 s"),
            )
            .with_hint("wait_seconds: 0 is never refused by this cap; an operator raises it with --long-poll-max-per-key / --long-poll-max-per-project"));
        }
        w.total += 1;
        *w.by_key.entry(key_id.to_owned()).or_default() += 1;
        *w.by_project.entry(project.to_owned()).or_default() += 1;
        Ok(Place {
            polls: self.clone(),
            key_id: key_id.to_owned(),
            project: project.to_owned(),
        })
    }

    /// Long polls waiting now, every project together.
    pub fn waiting(&self) -> usize {
        self.lock().total
    }

    /// The caps (`usize::MAX`: none), per key and per project.
    pub fn caps(&self) -> [(Cap, usize); 2] {
        [
            (Cap::Key, self.max_per_key),
            (Cap::Project, self.max_per_project),
        ]
    }

    /// Long polls refused by each cap since start.
    pub fn refused(&self) -> [(Cap, u64); 2] {
        [Cap::Key, Cap::Project].map(|c| (c, self.refused[c as usize].load(Ordering::Relaxed)))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Waiting> {
        // Each change is whole (counts moved together under the lock).
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A long poll's place; dropping it frees the place.
#[derive(Debug)]
pub struct Place {
    polls: Arc<LongPolls>,
    key_id: String,
    project: String,
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut guard = self.polls.lock();
        let w = &mut *guard;
        w.total -= 1;
        for (map, name) in [
            (&mut w.by_key, &self.key_id),
            (&mut w.by_project, &self.project),
        ] {
            if let Some(n) = map.get_mut(name) {
                *n -= 1;
                if *n == 0 {
                    map.remove(name);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cap_refuses_past_it_and_places_come_back() {
        let polls = LongPolls::new(2, 3);
        let a1 = polls.enter("k1", "p").unwrap();
        let _a2 = polls.enter("k1", "p").unwrap();
        assert!(polls.enter("k1", "p").is_err(), "key k1 is at 2");
        let _b1 = polls.enter("k2", "p").unwrap();
        assert!(polls.enter("k3", "p").is_err(), "project p is at 3");
        assert!(polls.enter("k3", "other").is_ok(), "another project is not");
        assert_eq!(polls.refused(), [(Cap::Key, 1), (Cap::Project, 1)]);
        drop(a1);
        assert_eq!(polls.waiting(), 2);
        assert!(
            polls.enter("k1", "p").is_ok(),
            "a freed place is taken again"
        );
        assert!(
            polls.lock().by_key.len() <= 2,
            "no entry kept for a key with none"
        );
    }

    #[test]
    fn zero_means_no_cap() {
        let polls = LongPolls::new(0, 0);
        let held: Vec<_> = (0..5000).map(|_| polls.enter("k", "p").unwrap()).collect();
        assert_eq!(polls.waiting(), held.len());
    }
}
