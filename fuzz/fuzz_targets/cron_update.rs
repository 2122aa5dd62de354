//! `cron_update`: arbitrary bytes through the body decoding and the merge
//! into a stored schedule's spec, as the handler runs them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use onceq_server::{cron::input, push::PushConfig};
use onceq_store::{CronSpec, CronTarget};
use onceq_types::cron::{CronUpdate, OverlapPolicy};

mod common;

fuzz_target!(|data: &[u8]| {
    let push = PushConfig::default();
    let mut spec = CronSpec {
        name: None,
        cron_expr: Some("@hourly".into()),
        run_at: None,
        timezone: "UTC".into(),
        target: CronTarget::Queue("reports".into()),
        payload: "{}".into(),
        headers: None,
        max_runs: None,
        overlap_policy: OverlapPolicy::Allow,
    };
    let outcome = onceq_server::extract::parse_body::<CronUpdate>(data).and_then(|r| {
        input::update_job_id(&r)?;
        input::update(&mut spec, r, &push)
    });
    match outcome {
        Ok(_) => {
            assert!(spec.cron_expr.is_some() != spec.run_at.is_some());
            input::parsed(&spec).expect("an accepted spec parses");
        }
        Err(e) => common::refused_as_4xx(&e),
    }
});
