//! `admin/keys/rotate` and `admin/keys/revoke`: arbitrary bytes through the
//! body decoding and validation the admin API runs before the store.
#![no_main]

use libfuzzer_sys::fuzz_target;
use onceq_server::admin::input;
use onceq_types::admin::{KeyRevoke, KeyRotate};

mod common;

fuzz_target!(|data: &[u8]| {
    let now = jiff::Timestamp::from_second(1_800_000_000).unwrap();
    common::check::<KeyRotate, _>(
        data,
        |r| input::key_rotate(r, now),
        |(id, expires)| {
            assert!(!id.is_empty() && id.len() <= 255);
            assert!(expires.is_none_or(|t| t > now));
        },
    );
    common::check::<KeyRevoke, _>(
        data,
        |r| input::key_id(r.key_id),
        |id| assert!(!id.is_empty() && id.len() <= 255),
    );
});
