//! `create`: arbitrary bytes through the body decoding and validation the
//! handler runs before it touches the store.
#![no_main]

use libfuzzer_sys::fuzz_target;
use onceq_server::input;
use onceq_types::request::CreateQueue;

mod common;

fuzz_target!(|data: &[u8]| {
    common::check::<CreateQueue, _>(
        data,
        // A server-wide default other than 0, so a create that gives none
        // is seen to take it.
        |r| input::create(r, 60),
        |c| {
            assert!(onceq_types::names::is_valid_queue_name(&c.name));
            let kept = i64::from(c.settings.completed_retention_seconds);
            assert!((0..=onceq_types::MAX_COMPLETED_RETENTION_SECONDS).contains(&kept));
            if let Some(dlq) = &c.settings.dead_letter_queue {
                common::valid_queue(dlq);
                assert_ne!(dlq, &c.name);
            }
            if let Some(b) = &c.settings.retry_backoff {
                common::valid_backoff(b);
            }
        },
    );
});
