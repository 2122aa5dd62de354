//! Idempotency-Key layer tests (being written).
