//! "Now", injectable: the ledger and the worker read the time here, so
//! tests move time instead of sleeping. The same type as the server's.

pub use onceq_types::clock::Clock;
