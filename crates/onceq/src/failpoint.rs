//! Fail points: named places in the request layer and the worker where a
//! test can make the pipeline stop as if its process died there. A "crash"
//! abandons the request or job on the spot: no cleanup, no release, no nack
//! — exactly what a killed process leaves behind. Production code never
//! arms one; an unarmed point costs one uncontended lock.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

/// A set of armed fail points, shared by clones.
#[derive(Clone, Debug, Default)]
pub struct FailPoints {
    armed: Arc<Mutex<HashMap<&'static str, u32>>>,
}

/// Returned by [`FailPoints::check`] when a point fires: the caller must
/// stop at once, leaving everything as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("fail point {0} fired (simulated crash)")]
pub struct Crashed(pub &'static str);

impl FailPoints {
    /// No point armed.
    pub fn new() -> Self {
        Self::default()
    }

    /// Arms `name` to fire the next `times` times it is reached.
    pub fn arm(&self, name: &'static str, times: u32) {
        self.armed
            .lock()
            .expect("failpoints poisoned")
            .insert(name, times);
    }

    /// Disarms every point.
    pub fn clear(&self) {
        self.armed.lock().expect("failpoints poisoned").clear();
    }

    /// Fires if `name` is armed (and counts the firing down).
    pub fn check(&self, name: &'static str) -> Result<(), Crashed> {
        let mut armed = self.armed.lock().expect("failpoints poisoned");
        match armed.get_mut(name) {
            Some(n) if *n > 0 => {
                *n -= 1;
                Err(Crashed(name))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fires_as_often_as_armed() {
        let f = FailPoints::new();
        assert!(f.check("a").is_ok());
        f.arm("a", 2);
        assert_eq!(f.check("a"), Err(Crashed("a")));
        assert_eq!(f.check("a"), Err(Crashed("a")));
        assert!(f.check("a").is_ok());
    }
}
