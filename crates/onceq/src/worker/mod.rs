//! The worker runtime (being written).
