//! PostgreSQL backend (being written).
