//! `redrive`: arbitrary bytes through the body decoding and validation the
//! handler runs before it touches the store.
#![no_main]

use libfuzzer_sys::fuzz_target;
use onceq_server::input;
use onceq_types::request::Redrive;

mod common;

fuzz_target!(|data: &[u8]| {
    common::check::<Redrive, _>(
        data,
        |r| input::redrive(r),
        |max| assert!(max.is_none_or(|m| m >= 1)),
    );
});
