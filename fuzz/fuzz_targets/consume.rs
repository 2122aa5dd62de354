//! `consume`: arbitrary bytes through the body decoding and validation the
//! handler runs before it touches the store.
#![no_main]

use libfuzzer_sys::fuzz_target;
use onceq_server::input;
use onceq_types::request::Consume;

mod common;

fuzz_target!(|data: &[u8]| {
    common::check::<Consume, _>(
        data,
        |r| input::consume(r),
        |c| {
            common::valid_queue(&c.queue);
            assert!((1..=10).contains(&c.max) && c.wait_seconds <= 20);
        },
    );
});
