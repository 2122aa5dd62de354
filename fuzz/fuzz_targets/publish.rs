//! `publish`: arbitrary bytes through the body decoding and validation the
//! handler runs before it touches the store.
#![no_main]

use libfuzzer_sys::fuzz_target;
use onceq_server::input;
use onceq_types::request::Publish;

mod common;

fuzz_target!(|data: &[u8]| {
    common::check::<Publish, _>(
        data,
        |r| input::publish(r, None),
        |p| {
            common::valid_queue(&p.queue);
            assert!(p.message.payload.len() <= onceq_types::MAX_PAYLOAD_BYTES);
            assert!(
                p.message
                    .idempotency_key
                    .as_ref()
                    .is_none_or(|k| k.len() <= 255)
            );
        },
    );
});
