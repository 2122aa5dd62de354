//! What every target checks: decoding and validation never panic, every
//! refusal is a 4xx (never a 500), and what is accepted is valid.
//! Each target uses part of it.
#![allow(dead_code)]

use onceq_server::ApiError;

/// Asserts a refusal is the client's fault.
pub fn refused_as_4xx(e: &ApiError) {
    let status = e.code().http_status();
    assert!((400..500).contains(&status), "{e} is not a 4xx");
}

/// Asserts an accepted queue name can name a queue.
pub fn valid_queue(name: &str) {
    assert!(
        onceq_types::names::is_addressable_queue_name(name),
        "accepted queue name {name:?}"
    );
}

/// A retry backoff validation let through is within the documented ranges
/// (docs/api.md, "Retry backoff").
pub fn valid_backoff(b: &onceq_types::RetryBackoff) {
    assert!((1..=604_800).contains(&b.initial_seconds), "{b:?}");
    assert!((b.initial_seconds..=604_800).contains(&b.max_seconds), "{b:?}");
    assert!((1.0..=10.0).contains(&b.multiplier), "{b:?}");
    assert!((0.0..=1.0).contains(&b.jitter), "{b:?}");
}

/// Runs decode + validate on `data` and checks the outcome.
pub fn check<T, R>(
    data: &[u8],
    validate: impl FnOnce(T) -> Result<R, ApiError>,
    accepted: impl FnOnce(R),
) where
    T: serde::de::DeserializeOwned + onceq_types::request::Fields,
{
    match onceq_server::extract::parse_body::<T>(data).and_then(validate) {
        Ok(r) => accepted(r),
        Err(e) => refused_as_4xx(&e),
    }
}
