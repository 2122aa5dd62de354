//! `onceq cron create|list|get|delete|pause|resume`: cron schedules, each
//! run published once into a queue (docs/cron.md).

use clap::Subcommand;
use onceq_types::cron::{CronCreate, CronJob, OverlapPolicy};
use serde_json::value::RawValue;

use super::{ServerArgs, client};
use crate::output;

// Parsed once per process: the size of one variant costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum CronCmd {
    /// Create a schedule publishing into an existing queue (or delivering to
    /// a URL with --task).
    Create {
        /// The queue each run publishes into.
        #[arg(long, conflicts_with = "task", required_unless_present = "task")]
        queue: Option<String>,
        /// A URL each run is delivered to, as a push delivery is (the
        /// signing secret is printed once).
        #[arg(long, value_name = "URL")]
        task: Option<String>,
        /// Five fields (min hour dom month dow), six with seconds first, or
        /// @hourly, @daily, @weekly, @monthly, @yearly.
        #[arg(
            long = "cron",
            value_name = "EXPR",
            conflicts_with = "at",
            required_unless_present = "at"
        )]
        cron_expr: Option<String>,
        /// One run at this RFC 3339 time instead.
        #[arg(long, value_name = "TIME")]
        at: Option<String>,
        /// The IANA zone the expression is read in (default UTC).
        #[arg(long, value_name = "ZONE")]
        timezone: Option<String>,
        /// Each run's payload, as JSON (default {}).
        #[arg(long, value_name = "JSON")]
        payload: Option<String>,
        /// A header of each run's message, NAME=VALUE (repeatable).
        #[arg(long = "header", value_name = "NAME=VALUE")]
        headers: Vec<String>,
        /// End the schedule after this many runs.
        #[arg(long, value_name = "N")]
        max_runs: Option<i64>,
        /// Skip a run while the previous run's message is still held.
        #[arg(long)]
        skip_overlap: bool,
        /// A name to show.
        #[arg(long)]
        name: Option<String>,
        /// A repeated create with this key answers the first schedule.
        #[arg(long, value_name = "KEY")]
        idempotency_key: Option<String>,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// List the project's schedules.
    List {
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Show one schedule with its recent runs.
    Get {
        /// The schedule's id (cron_...).
        job_id: String,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Delete a schedule (the messages its runs published stay).
    Delete {
        /// The schedule's id.
        job_id: String,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Pause a schedule: it does not fire until resumed.
    Pause {
        /// The schedule's id.
        job_id: String,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Resume a paused schedule (ticks missed while paused are skipped).
    Resume {
        /// The schedule's id.
        job_id: String,
        #[command(flatten)]
        server: ServerArgs,
    },
}

pub async fn run(cmd: CronCmd) -> anyhow::Result<()> {
    match cmd {
        CronCmd::Create {
            queue,
            task,
            cron_expr,
            at,
            timezone,
            payload,
            headers,
            max_runs,
            skip_overlap,
            name,
            idempotency_key,
            server,
        } => {
            let req = CronCreate {
                name,
                cron_expr,
                run_at: at,
                timezone,
                queue,
                task,
                payload: payload.map(json_arg("--payload")).transpose()?,
                headers: header_args(&headers)?,
                max_runs,
                overlap_policy: skip_overlap.then_some(OverlapPolicy::Skip),
                idempotency_key,
                // A task's secret, retries and timeout: the defaults (the
                // API takes them; the CLI has no flags for them yet).
                ..CronCreate::default()
            };
            let created = client(&server)?.cron_create(&req).await?;
            show(&created.job, server.json)?;
            if let (Some(secret), false) = (&created.job.secret, server.json) {
                println!("secret: {secret}  (shown once: deliveries are signed with it)");
            }
            Ok(())
        }
        CronCmd::List { server } => {
            let jobs = client(&server)?.cron_list().await?;
            if server.json {
                return output::json(&jobs);
            }
            let rows = jobs
                .iter()
                .map(|j| {
                    vec![
                        j.job_id.clone(),
                        when(j),
                        j.queue
                            .clone()
                            .or_else(|| j.task.clone())
                            .unwrap_or_else(|| "-".into()),
                        next(j),
                        j.run_count.to_string(),
                        if j.paused { "paused" } else { "active" }.to_owned(),
                    ]
                })
                .collect();
            output::table(
                &["JOB_ID", "WHEN", "TARGET", "NEXT_RUN_AT", "RUNS", "STATE"],
                rows,
            );
            Ok(())
        }
        CronCmd::Get { job_id, server } => {
            let j = client(&server)?.cron_get(&job_id).await?;
            show(&j, server.json)?;
            if !server.json && !j.runs.is_empty() {
                println!();
                let rows = j
                    .runs
                    .iter()
                    .map(|r| {
                        vec![
                            r.scheduled_at.to_string(),
                            r.fired_at.to_string(),
                            r.message_id.clone().unwrap_or_else(|| "-".into()),
                            serde_json::to_value(r.outcome)
                                .ok()
                                .and_then(|v| v.as_str().map(str::to_owned))
                                .unwrap_or_default(),
                        ]
                    })
                    .collect();
                output::table(&["SCHEDULED_AT", "FIRED_AT", "MESSAGE_ID", "OUTCOME"], rows);
            }
            Ok(())
        }
        CronCmd::Delete { job_id, server } => {
            let d = client(&server)?.cron_delete(&job_id).await?;
            if server.json {
                return output::json(&d);
            }
            println!("deleted cron job {}", d.job_id);
            Ok(())
        }
        CronCmd::Pause { job_id, server } => {
            let j = client(&server)?.cron_pause(&job_id).await?;
            show(&j, server.json)
        }
        CronCmd::Resume { job_id, server } => {
            let j = client(&server)?.cron_resume(&job_id).await?;
            show(&j, server.json)
        }
    }
}

fn json_arg(flag: &'static str) -> impl Fn(String) -> anyhow::Result<Box<RawValue>> {
    move |text| RawValue::from_string(text).map_err(|e| anyhow::anyhow!("{flag} is not JSON: {e}"))
}

fn header_args(pairs: &[String]) -> anyhow::Result<Option<Box<RawValue>>> {
    if pairs.is_empty() {
        return Ok(None);
    }
    let mut map = serde_json::Map::new();
    for pair in pairs {
        let (name, value) = pair
            .split_once('=')
            .ok_or_else(|| anyhow::anyhow!("--header {pair:?} must look like NAME=VALUE"))?;
        map.insert(name.to_owned(), value.into());
    }
    Ok(Some(serde_json::value::to_raw_value(&map)?))
}

fn when(j: &CronJob) -> String {
    match (&j.cron_expr, j.run_at) {
        (Some(expr), _) => format!("{expr} ({})", j.timezone),
        (None, Some(at)) => format!("at {at}"),
        (None, None) => "-".into(),
    }
}

fn next(j: &CronJob) -> String {
    j.next_run_at
        .map_or_else(|| "-".to_owned(), |t| t.to_string())
}

fn show(j: &CronJob, json: bool) -> anyhow::Result<()> {
    if json {
        return output::json(j);
    }
    output::fields(&[
        ("job_id", j.job_id.clone()),
        ("name", j.name.clone().unwrap_or_else(|| "-".into())),
        ("when", when(j)),
        (
            "target",
            j.queue
                .clone()
                .or_else(|| j.task.clone())
                .unwrap_or_else(|| "-".into()),
        ),
        ("next_run_at", next(j)),
        ("run_count", j.run_count.to_string()),
        (
            "max_runs",
            j.max_runs.map_or_else(|| "-".into(), |n| n.to_string()),
        ),
        ("overlap_policy", j.overlap_policy.as_str().into()),
        ("paused", j.paused.to_string()),
        ("created_at", j.created_at.to_string()),
    ]);
    Ok(())
}
