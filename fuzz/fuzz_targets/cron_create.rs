//! `cron_create`: arbitrary bytes through the body decoding and validation
//! the handler runs before it touches the store (expression, zone, run_at,
//! target, payload, headers, limits).
#![no_main]

use libfuzzer_sys::fuzz_target;
use onceq_server::{cron::input, push::PushConfig};
use onceq_store::CronTarget;
use onceq_types::cron::CronCreate;

mod common;

fuzz_target!(|data: &[u8]| {
    let push = PushConfig::default();
    common::check::<CronCreate, _>(
        data,
        |r| input::create(r, &push),
        |c| {
            // One when, one target, and a schedule that parses again.
            assert!(c.spec.cron_expr.is_some() != c.spec.run_at.is_some());
            if let CronTarget::Queue(q) = &c.spec.target {
                common::valid_queue(q);
            }
            input::parsed(&c.spec).expect("an accepted spec parses");
            if let Some(n) = c.spec.max_runs {
                assert!(n >= 1);
            }
        },
    );
});
