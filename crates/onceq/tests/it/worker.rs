//! Worker tests (being written).
