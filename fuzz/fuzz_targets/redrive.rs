//! `redrive`: arbitrary bytes through the body decoding and validation the
//! handler runs before it touches the store.
#![no_main]

use libfuzzer_sys::fuzz_target;
use onceq_server::input::{self, MAX_REDRIVE_IDS, RedriveInput};
use onceq_types::request::Redrive;

mod common;

fuzz_target!(|data: &[u8]| {
    common::check::<Redrive, _>(
        data,
        |r| input::redrive(r),
        |what| match what {
            RedriveInput::Some(max) => assert!(max.is_none_or(|m| m >= 1)),
            RedriveInput::Ids(ids) => {
                assert!(!ids.is_empty() && ids.len() <= MAX_REDRIVE_IDS);
                assert!(ids.iter().all(|id| !id.is_empty() && id.len() <= 255));
            }
        },
    );
});
