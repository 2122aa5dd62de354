//! A stored schedule as the API shows it.

use onceq_store::{CronRecord, CronRunRecord, CronTarget};
use onceq_types::cron::{CronJob, CronRun};

use crate::{ApiError, payloads::PayloadGate, routes::publish::raw};

/// `record` for an answer; its payload only if `gate` lets the key read
/// payloads.
pub fn job(record: CronRecord, gate: PayloadGate) -> Result<CronJob, ApiError> {
    let (queue, task) = match record.spec.target {
        CronTarget::Queue(q) => (Some(q), None),
        CronTarget::Task(url) => (None, Some(url)),
    };
    Ok(CronJob {
        job_id: record.job.job_id,
        name: record.spec.name,
        cron_expr: record.spec.cron_expr,
        run_at: record.spec.run_at,
        timezone: record.spec.timezone,
        next_run_at: record.next_run_at,
        queue,
        task,
        payload: gate.reveal(record.spec.payload).map(raw).transpose()?,
        payload_withheld: gate.withheld(),
        headers: crate::headers::stored(record.spec.headers.as_deref())?,
        max_runs: record.spec.max_runs,
        overlap_policy: record.spec.overlap_policy,
        run_count: record.run_count,
        paused: record.paused,
        created_at: record.created_at,
        runs: record.runs.into_iter().map(run).collect(),
        secret: None,
    })
}

fn run(r: CronRunRecord) -> CronRun {
    CronRun {
        scheduled_at: r.scheduled_at,
        fired_at: r.fired_at,
        message_id: r.message_id,
        outcome: r.outcome,
        error: r.error,
    }
}
