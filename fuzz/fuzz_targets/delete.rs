//! `delete`: arbitrary bytes through the body decoding and validation the
//! handler runs before it touches the store.
#![no_main]

use libfuzzer_sys::fuzz_target;
use onceq_server::input;
use onceq_types::request::DeleteQueue;

mod common;

fuzz_target!(|data: &[u8]| {
    common::check::<DeleteQueue, _>(data, |r| input::delete(r), |q| common::valid_queue(&q));
});
