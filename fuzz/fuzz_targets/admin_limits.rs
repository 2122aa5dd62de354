//! `admin/keys/limits` and `admin/projects/limits`: arbitrary bytes through
//! the body decoding and validation the admin API runs before the store.
#![no_main]

use libfuzzer_sys::fuzz_target;
use onceq_server::admin::input;
use onceq_types::admin::{KeyLimits, ProjectLimits};

mod common;

fn valid_rate(rate: Option<onceq_store::RateLimit>) {
    if let Some(r) = rate {
        assert!(r.per_sec.is_finite() && r.per_sec >= 0.0);
        assert!(r.burst >= 1 && i64::from(r.burst) <= input::MAX_BURST);
    }
}

fuzz_target!(|data: &[u8]| {
    common::check::<KeyLimits, _>(data, input::key_limits, |(id, rate)| {
        assert!(!id.is_empty());
        valid_rate(rate);
    });
    common::check::<ProjectLimits, _>(data, input::project_limits, |p| {
        assert!(p.credit_micros.is_some() || p.rate.is_some());
        assert!(
            p.credit_micros
                .flatten()
                .is_none_or(|m| m <= 1_000_000_000_000_000)
        );
        valid_rate(p.rate.flatten());
    });
});
