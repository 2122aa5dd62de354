//! `ack`: arbitrary bytes through the body decoding and validation the
//! handler runs before it touches the store.
#![no_main]

use libfuzzer_sys::fuzz_target;
use onceq_server::input;
use onceq_types::{attempt::MAX_ACK_RESULT_BYTES, request::Ack};

mod common;

fuzz_target!(|data: &[u8]| {
    common::check::<Ack, _>(
        data,
        |r| input::ack(r),
        |(l, result)| {
            common::valid_queue(&l.queue);
            assert!(!l.message_id.is_empty() && l.message_id.len() <= 255);
            // Kept in compact form, within its bound (never an empty text).
            if let Some(result) = result {
                assert!(!result.is_empty() && result.len() <= MAX_ACK_RESULT_BYTES);
            }
        },
    );
});
