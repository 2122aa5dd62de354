//! `publish_batch`: arbitrary bytes through the body decoding and validation the
//! handler runs before it touches the store.
#![no_main]

use libfuzzer_sys::fuzz_target;
use onceq_server::input;
use onceq_types::request::PublishBatch;

mod common;

fuzz_target!(|data: &[u8]| {
    common::check::<PublishBatch, _>(
        data,
        |r| input::publish_batch(r, onceq_types::MAX_BATCH, None),
        |b| {
            common::valid_queue(&b.queue);
            assert!((1..=onceq_types::MAX_BATCH).contains(&b.messages.len()));
            for m in &b.messages {
                assert!(m.payload.len() <= onceq_types::MAX_PAYLOAD_BYTES);
            }
        },
    );
});
