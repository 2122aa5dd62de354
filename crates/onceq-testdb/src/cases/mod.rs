//! The shared ledger's case tables (`crates/onceq/sql/cases/*.json`, the
//! format in `crates/onceq/sql/README.md`), parsed once, and their runners.
//!
//! Every Rust runner (the server's store conformance suite, the server's
//! HTTP mapping, the toolkit's `PgLedger`/`SqliteLedger` and job facts)
//! implements a driver — a handful of calls onto its own code — and hands
//! it to [`ledger::run`] or [`job_fact::run`], which run every case on a
//! fresh driver and panic naming the case and step that disagreed. An op a
//! runner does not know is a parse error, so it fails too.
//!
//! - [`ledger`]: the request ledger's cases and fingerprint vectors.
//! - [`job_fact`]: the job facts' cases.

pub mod job_fact;
pub mod ledger;

use jiff::{SignedDuration, Timestamp};
use serde::Deserialize;

/// A case: a name and its steps, each kept as JSON until it is run, so a
/// step that does not parse fails naming its case and place.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCase {
    /// What the case shows.
    pub name: String,
    /// Its steps, in order.
    pub steps: Vec<serde_json::Value>,
}

/// `at` values are seconds (possibly fractional) after the file's epoch.
pub(crate) fn after(epoch: Timestamp, secs: f64) -> Timestamp {
    epoch + SignedDuration::from_micros((secs * 1e6).round() as i64)
}

/// Where a failure happened, for the panic message.
pub(crate) fn place(case: &str, i: usize, step: &serde_json::Value) -> String {
    format!("case {case:?}, step {} ({step})", i + 1)
}
