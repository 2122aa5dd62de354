//! The server's notion of "now". Production reads the system clock; tests
//! hold a manual clock and advance it, so lease expiry, delays and dedupe
//! windows are tested without sleeping. The same type as the toolkit's.

pub use onceq_types::clock::Clock;
