//! `nack`: arbitrary bytes through the body decoding and validation the
//! handler runs before it touches the store.
#![no_main]

use libfuzzer_sys::fuzz_target;
use onceq_server::input;
use onceq_types::request::Nack;

mod common;

fuzz_target!(|data: &[u8]| {
    common::check::<Nack, _>(
        data,
        |r| input::nack(r),
        |n| {
            common::valid_queue(&n.lease.queue);
            assert!((0..=onceq_types::MAX_DELAY_SECONDS).contains(&n.delay_seconds));
        },
    );
});
