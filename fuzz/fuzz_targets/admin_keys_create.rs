//! `admin/keys/create`: arbitrary bytes through the body decoding and
//! validation the admin API (and `onceq keys create`) runs before the store.
#![no_main]

use libfuzzer_sys::fuzz_target;
use onceq_server::admin::input;
use onceq_types::admin::KeyCreate;

mod common;

fuzz_target!(|data: &[u8]| {
    let now = jiff::Timestamp::from_second(1_800_000_000).unwrap();
    common::check::<KeyCreate, _>(
        data,
        |r| input::key_create(r, now),
        |k| {
            let n = k.project.chars().count();
            assert!((1..=input::MAX_PROJECT_LEN).contains(&n));
            assert!(!k.project.chars().any(char::is_control));
            assert!(k.expires_at.is_none_or(|t| t > now));
            assert!(
                k.label
                    .is_none_or(|l| !l.is_empty() && !l.chars().any(char::is_control))
            );
        },
    );
});
