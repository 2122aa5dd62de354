//! The Idempotency-Key layer (being written).
