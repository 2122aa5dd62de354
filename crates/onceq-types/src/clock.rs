//! "Now", injectable, shared by the server, the ledger and the worker.
//! Production reads the system clock; tests hold a
//! manual clock and advance it, so leases and retention are tested without
//! sleeping.

use std::sync::{Arc, Mutex};

use jiff::{SignedDuration, Timestamp};

/// Where the ledger and the worker read the time.
#[derive(Clone, Debug, Default)]
pub enum Clock {
    /// The system clock.
    #[default]
    System,
    /// A clock that moves only when told to.
    Manual(Arc<Mutex<Timestamp>>),
}

impl Clock {
    /// A manual clock starting at `start`.
    pub fn manual(start: Timestamp) -> Self {
        Self::Manual(Arc::new(Mutex::new(start)))
    }

    /// The current time.
    pub fn now(&self) -> Timestamp {
        match self {
            Self::System => Timestamp::now(),
            Self::Manual(t) => *t.lock().expect("clock lock poisoned"),
        }
    }

    /// Moves a manual clock forward; the system clock ignores this.
    pub fn advance(&self, by: SignedDuration) {
        if let Self::Manual(t) = self {
            let mut t = t.lock().expect("clock lock poisoned");
            *t = t.checked_add(by).expect("clock overflow");
        }
    }
}
