//! SQLite backend (being written).
