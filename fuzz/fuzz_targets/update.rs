//! `update`: arbitrary bytes through the body decoding and validation the
//! handler runs before it touches the store (a `retry_backoff` accepted is
//! within its documented ranges).
#![no_main]

use libfuzzer_sys::fuzz_target;
use onceq_server::input;
use onceq_types::request::UpdateQueue;

mod common;

fuzz_target!(|data: &[u8]| {
    common::check::<UpdateQueue, _>(
        data,
        |r| input::update(r),
        |u| {
            common::valid_queue(&u.name);
            if let Some(dlq) = &u.changes.dead_letter_queue {
                common::valid_queue(dlq);
                assert_ne!(dlq, &u.name);
            }
            if let Some(Some(b)) = &u.changes.retry_backoff {
                common::valid_backoff(b);
            }
        },
    );
});
