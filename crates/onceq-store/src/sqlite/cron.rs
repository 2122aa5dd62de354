//! Cron schedules: insert (with create's own dedupe), get, list, update,
//! pause, delete, the firing loop's due scan, and the advance that records
//! a run and moves its schedule on. Writes run on the writer thread, so an
//! advance's compare and set cannot race another.

use jiff::Timestamp;
use onceq_types::cron::{OverlapPolicy, RunOutcome};
use rusqlite::{Connection, OptionalExtension, Row, params};

use super::time;
use crate::{
    CronAdvance, CronDue, CronInsert, CronInserted, CronPause, CronRecord, CronRef, CronRunOutcome,
    CronRunRecord, CronSpec, CronTarget, CronUpdate, Result, StoreError, ids,
};

/// A schedule from a row of the statements' shared column list.
fn record(r: &Row<'_>) -> rusqlite::Result<CronRecord> {
    let target = match (r.get::<_, Option<String>>(6)?, r.get(7)?) {
        (Some(q), _) => CronTarget::Queue(q),
        (None, Some(url)) => CronTarget::Task(url),
        (None, None) => CronTarget::Queue(String::new()),
    };
    let overlap_policy = match r.get::<_, String>(11)?.as_str() {
        "skip" => OverlapPolicy::Skip,
        _ => OverlapPolicy::Allow,
    };
    Ok(CronRecord {
        job: CronRef {
            job_id: r.get(0)?,
            project: r.get(1)?,
        },
        spec: CronSpec {
            name: r.get(2)?,
            cron_expr: r.get(3)?,
            run_at: time::get_opt(r, 4)?,
            timezone: r.get(5)?,
            target,
            payload: r.get(8)?,
            headers: r.get(9)?,
            max_runs: r.get(10)?,
            overlap_policy,
        },
        next_run_at: time::get_opt(r, 12)?,
        run_count: r.get(13)?,
        last_message_id: r.get(14)?,
        paused: r.get(15)?,
        created_at: time::get(r, 16)?,
        runs: Vec::new(),
    })
}

fn run_record(r: &Row<'_>) -> rusqlite::Result<CronRunRecord> {
    let outcome: String = r.get(3)?;
    Ok(CronRunRecord {
        scheduled_at: time::get(r, 0)?,
        fired_at: time::get(r, 1)?,
        message_id: r.get(2)?,
        outcome: RunOutcome::parse(&outcome).unwrap_or(RunOutcome::Failed),
        error: r.get(4)?,
    })
}

/// The target as its two nullable columns.
fn target_columns(t: &CronTarget) -> (Option<&str>, Option<&str>) {
    match t {
        CronTarget::Queue(q) => (Some(q), None),
        CronTarget::Task(url) => (None, Some(url)),
    }
}

fn micros_opt(t: Option<Timestamp>) -> Option<i64> {
    t.map(time::micros)
}

/// `Store::cron_insert`.
pub(super) fn insert(conn: &Connection, p: &CronInsert) -> Result<CronInserted> {
    if let Some(max) = p.max_per_project {
        let existing: i64 = conn
            .prepare_cached(sql!("cron_count"))?
            .query_row([&p.project], |r| r.get(0))?;
        if existing >= i64::from(max) {
            // A key naming a schedule already is answered with it.
            if let Some(key) = &p.idempotency_key {
                let found = conn
                    .prepare_cached(sql!("cron_get_by_key"))?
                    .query_row(params![p.project, key], record)
                    .optional()?;
                if let Some(mut job) = found {
                    job.runs = runs(conn, &job.job.job_id)?;
                    return Ok(CronInserted {
                        job,
                        created: false,
                    });
                }
            }
            return Err(StoreError::Invalid(crate::cron_cap_message(
                &p.project, max,
            )));
        }
    }
    let id = ids::cron_id();
    let s = &p.spec;
    let (queue, task) = target_columns(&s.target);
    let n = conn.prepare_cached(sql!("cron_insert"))?.execute(params![
        id,
        p.project,
        s.name,
        s.cron_expr,
        micros_opt(s.run_at),
        s.timezone,
        queue,
        task,
        s.payload,
        s.headers,
        s.max_runs,
        s.overlap_policy.as_str(),
        p.idempotency_key,
        micros_opt(p.next_run_at),
        time::micros(p.now),
    ])?;
    if n > 0 {
        let job = get(
            conn,
            &CronRef {
                project: p.project.clone(),
                job_id: id,
            },
        )?
        .ok_or_else(|| StoreError::internal("inserted cron job not found"))?;
        return Ok(CronInserted { job, created: true });
    }
    // The key named a schedule already: answer it.
    let mut job = conn
        .prepare_cached(sql!("cron_get_by_key"))?
        .query_row(params![p.project, p.idempotency_key], record)?;
    job.runs = runs(conn, &job.job.job_id)?;
    Ok(CronInserted {
        job,
        created: false,
    })
}

fn runs(conn: &Connection, job_id: &str) -> Result<Vec<CronRunRecord>> {
    let mut stmt = conn.prepare_cached(sql!("cron_runs"))?;
    let rows = stmt.query_map([job_id], run_record)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// `Store::cron_get`.
pub(super) fn get(conn: &Connection, job: &CronRef) -> Result<Option<CronRecord>> {
    let Some(mut record) = conn
        .prepare_cached(sql!("cron_get"))?
        .query_row(params![job.project, job.job_id], record)
        .optional()?
    else {
        return Ok(None);
    };
    record.runs = runs(conn, &job.job_id)?;
    Ok(Some(record))
}

/// `Store::cron_list`.
pub(super) fn list(conn: &Connection, project: &str) -> Result<Vec<CronRecord>> {
    let mut stmt = conn.prepare_cached(sql!("cron_list"))?;
    let rows = stmt.query_map([project], record)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// `Store::cron_update`.
pub(super) fn update(conn: &Connection, p: &CronUpdate) -> Result<Option<CronRecord>> {
    let s = &p.spec;
    let (queue, task) = target_columns(&s.target);
    let n = conn.prepare_cached(sql!("cron_update"))?.execute(params![
        p.job.project,
        p.job.job_id,
        s.name,
        s.cron_expr,
        micros_opt(s.run_at),
        s.timezone,
        queue,
        task,
        s.payload,
        s.headers,
        s.max_runs,
        s.overlap_policy.as_str(),
        micros_opt(p.next_run_at),
        time::micros(p.now),
    ])?;
    if n == 0 {
        return Ok(None);
    }
    get(conn, &p.job)
}

/// `Store::cron_pause`.
pub(super) fn pause(conn: &Connection, p: &CronPause) -> Result<Option<CronRecord>> {
    let n = conn.prepare_cached(sql!("cron_pause"))?.execute(params![
        p.job.project,
        p.job.job_id,
        p.paused,
        micros_opt(p.next_run_at),
        time::micros(p.now),
    ])?;
    if n == 0 {
        return Ok(None);
    }
    get(conn, &p.job)
}

/// `Store::cron_delete`. Runs go with their schedule (ON DELETE CASCADE).
pub(super) fn delete(conn: &Connection, job: &CronRef) -> Result<bool> {
    let n = conn
        .prepare_cached(sql!("cron_delete"))?
        .execute(params![job.project, job.job_id])?;
    Ok(n > 0)
}

/// `Store::cron_due`.
pub(super) fn due(
    conn: &Connection,
    now: Timestamp,
    limit: u32,
    per_project: u32,
) -> Result<CronDue> {
    let mut stmt = conn.prepare_cached(sql!("cron_due"))?;
    let due = stmt
        .query_map(params![time::micros(now), limit, per_project], record)?
        .collect::<rusqlite::Result<_>>()?;
    let next: Option<i64> = conn
        .prepare_cached(sql!("cron_next"))?
        .query_row([time::micros(now)], |r| r.get(0))?;
    Ok(CronDue {
        due,
        next_at: next.map(time::to_timestamp).transpose()?,
    })
}

/// `Store::cron_advance`.
pub(super) fn advance(conn: &Connection, p: &CronAdvance) -> Result<bool> {
    let moved = conn.prepare_cached(sql!("cron_advance"))?.execute(params![
        p.job_id,
        time::micros(p.scheduled_at),
        micros_opt(p.next_run_at),
        i64::from(p.counted),
        p.run.message_id,
        time::micros(p.run.fired_at),
    ])?;
    if moved == 0 {
        // Another firing of this tick advanced it first (or the schedule
        // changed or went): nothing to record.
        return Ok(false);
    }
    let r = &p.run;
    conn.prepare_cached(sql!("cron_run_insert"))?
        .execute(params![
            p.job_id,
            time::micros(r.scheduled_at),
            time::micros(r.fired_at),
            r.message_id,
            r.outcome.as_str(),
            r.error,
        ])?;
    conn.prepare_cached(sql!("cron_runs_trim"))?
        .execute([&p.job_id])?;
    Ok(true)
}

/// `Store::cron_run_outcome`.
pub(super) fn run_outcome(conn: &Connection, p: &CronRunOutcome) -> Result<bool> {
    let n = conn
        .prepare_cached(sql!("cron_run_outcome"))?
        .execute(params![
            p.job_id,
            time::micros(p.scheduled_at),
            p.outcome.as_str(),
            p.error,
            time::micros(p.now),
            p.message_id,
        ])?;
    Ok(n > 0)
}
