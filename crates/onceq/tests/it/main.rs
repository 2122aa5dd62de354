//! Tests of the toolkit against a real onceq server (in-process, on the
//! embedded store, with a manual clock) and a real PostgreSQL application
//! database. Each hole of `three-keys.md` has a test named after it.

mod harness;

mod client;
mod diagrams;
mod guide;
mod idempotency;
#[cfg(feature = "otel")]
mod trace_context;
mod webhooks;
mod worker;
