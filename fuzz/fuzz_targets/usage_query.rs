//! `account/usage`: arbitrary `from` and `to` query values through the
//! range validation.
#![no_main]

use libfuzzer_sys::fuzz_target;
use onceq_server::input;

mod common;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (from, to) = text.split_once('&').unwrap_or((&text, ""));
    let now = jiff::Timestamp::from_second(1_800_000_000).unwrap();
    let opt = |s: &str| (!s.is_empty()).then_some(s.to_owned());
    match input::usage_range(opt(from).as_deref(), opt(to).as_deref(), now) {
        Ok((f, t)) => assert!(f <= t),
        Err(e) => common::refused_as_4xx(&e),
    }
});
