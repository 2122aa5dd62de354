//! `extend`: arbitrary bytes through the body decoding and validation the
//! handler runs before it touches the store.
#![no_main]

use libfuzzer_sys::fuzz_target;
use onceq_server::input;
use onceq_types::request::Extend;

mod common;

fuzz_target!(|data: &[u8]| {
    common::check::<Extend, _>(
        data,
        |r| input::extend(r),
        |e| {
            common::valid_queue(&e.lease.queue);
            assert!(e.visibility_timeout.as_secs() <= onceq_types::MAX_VISIBILITY_TIMEOUT_SECONDS);
        },
    );
});
