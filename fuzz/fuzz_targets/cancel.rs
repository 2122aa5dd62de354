//! `cancel`: arbitrary bytes through the body decoding and validation the
//! handler runs before it touches the store.
#![no_main]

use libfuzzer_sys::fuzz_target;
use onceq_server::input;
use onceq_types::request::Cancel;

mod common;

fuzz_target!(|data: &[u8]| {
    common::check::<Cancel, _>(
        data,
        |r| input::cancel(r),
        |(queue, message_id)| {
            common::valid_queue(&queue);
            assert!(!message_id.is_empty() && message_id.len() <= 255);
        },
    );
});
