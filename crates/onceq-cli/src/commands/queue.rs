//! `onceq queue create|update|delete|get|pause|resume`: one queue's record,
//! its settings, and whether it hands messages out.

use std::io::{BufRead, IsTerminal, Write};

use clap::{Args, Subcommand};
use onceq_types::{
    QueueRecord, QueueType,
    reply::Paused,
    request::{CreateQueue, RetryBackoffBody, UpdateQueue},
};

use super::{ServerArgs, client};
use crate::output;

#[derive(Debug, Subcommand)]
pub enum QueueCmd {
    /// Create a queue (and its NAME-dlq unless --dead-letter-queue names one).
    Create {
        /// The queue's name.
        name: String,
        /// standard (default) or fifo: fixed for the queue's life.
        #[arg(long = "type", value_name = "TYPE", value_parser = ["standard", "fifo"])]
        queue_type: Option<String>,
        #[command(flatten)]
        settings: SettingsArgs,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Change a queue's settings; the ones not given keep their values.
    Update {
        /// The queue's name.
        name: String,
        #[command(flatten)]
        settings: SettingsArgs,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Delete a queue and every message it holds (asks first; --yes to skip).
    Delete {
        /// The queue's name.
        name: String,
        /// Do not ask first. Required when stdin is not a terminal.
        #[arg(short = 'y', long)]
        yes: bool,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Show a queue's settings.
    Get {
        /// The queue's name.
        name: String,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Pause a queue: publishes are still accepted, nothing is handed out
    /// (consume answers empty, push delivery stops) until `queue resume`.
    Pause {
        /// The queue's name.
        name: String,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Resume a paused queue: hand-outs start again at once.
    Resume {
        /// The queue's name.
        name: String,
        #[command(flatten)]
        server: ServerArgs,
    },
}

/// The settings `create` and `update` take (the server checks the ranges).
#[derive(Debug, Args)]
pub struct SettingsArgs {
    /// An existing standard queue to dead-letter into.
    #[arg(long, value_name = "QUEUE")]
    dead_letter_queue: Option<String>,
    /// Failed hand-outs before a message is dead-lettered (0..=1000).
    #[arg(long, value_name = "N")]
    max_retries: Option<i64>,
    /// The lease consume grants by default, in seconds (0..=43200).
    #[arg(long, value_name = "SECONDS")]
    visibility_timeout: Option<i64>,
    /// Days a message is kept at most (1..=30).
    #[arg(long, value_name = "DAYS")]
    retention_days: Option<i64>,
    /// Whether publishes may set a priority.
    #[arg(long, value_name = "BOOL")]
    enable_priority: Option<bool>,
    /// The retry backoff of failed hand-outs, as
    /// `initial=SECONDS,max=SECONDS[,multiplier=X][,jitter=F]`, or `none`
    /// (update: remove it).
    #[arg(long, value_name = "SPEC", value_parser = parse_backoff)]
    retry_backoff: Option<Backoff>,
    /// The most messages in flight at once, across every consumer and
    /// server (1..=100000), or `none` (update: remove the cap).
    #[arg(long, value_name = "N|none", value_parser = parse_limit::<i64>)]
    max_in_flight: Option<Limit<i64>>,
    /// The most hand-outs per second (0.01..=100000), or `none` (update:
    /// remove the cap).
    #[arg(long, value_name = "RATE|none", value_parser = parse_limit::<f64>)]
    rate_per_sec: Option<Limit<f64>>,
    /// How long acked (and cancelled) messages are kept, as `completed`,
    /// in seconds (0..=2592000; 0: not at all).
    #[arg(long, value_name = "SECONDS")]
    completed_retention: Option<i64>,
}

/// `--max-in-flight` / `--rate-per-sec`: a value, or `none`.
#[derive(Debug, Clone, Copy)]
enum Limit<T> {
    Set(T),
    None,
}

impl<T> Limit<T> {
    /// For update: `Some(None)` removes it.
    fn change(self) -> Option<T> {
        match self {
            Limit::Set(v) => Some(v),
            Limit::None => None,
        }
    }
}

fn parse_limit<T: std::str::FromStr>(s: &str) -> Result<Limit<T>, String> {
    if s == "none" {
        return Ok(Limit::None);
    }
    s.parse()
        .map(Limit::Set)
        .map_err(|_| format!("{s:?} is not a number (or none)"))
}

/// `--retry-backoff`: a backoff, or `none`.
#[derive(Debug, Clone)]
enum Backoff {
    Set(RetryBackoffBody),
    None,
}

fn parse_backoff(spec: &str) -> Result<Backoff, String> {
    if spec == "none" {
        return Ok(Backoff::None);
    }
    let mut b = RetryBackoffBody::default();
    for part in spec.split(',') {
        let (key, value) = part
            .split_once('=')
            .ok_or_else(|| format!("{part:?} must look like key=value"))?;
        let number = |v: &str| {
            v.parse::<f64>()
                .map_err(|_| format!("{key} must be a number (got {v:?})"))
        };
        let whole = |v: &str| {
            v.parse::<i64>()
                .map_err(|_| format!("{key} must be whole seconds (got {v:?})"))
        };
        match key {
            "initial" => b.initial_seconds = Some(whole(value)?),
            "max" => b.max_seconds = Some(whole(value)?),
            "multiplier" => b.multiplier = Some(number(value)?),
            "jitter" => b.jitter = Some(number(value)?),
            _ => {
                return Err(format!(
                    "unknown key {key:?}: use initial, max, multiplier, jitter (or none)"
                ));
            }
        }
    }
    Ok(Backoff::Set(b))
}

pub async fn run(cmd: QueueCmd) -> anyhow::Result<()> {
    match cmd {
        QueueCmd::Create {
            name,
            queue_type,
            settings: s,
            server,
        } => {
            let req = CreateQueue {
                name: Some(name),
                queue_type: queue_type.as_deref().and_then(QueueType::parse),
                dead_letter_queue: s.dead_letter_queue,
                max_retries: s.max_retries,
                message_retention_days: s.retention_days,
                visibility_timeout_default: s.visibility_timeout,
                enable_priority: s.enable_priority,
                retry_backoff: match s.retry_backoff {
                    Some(Backoff::Set(b)) => Some(b),
                    // A new queue has none already.
                    Some(Backoff::None) | None => None,
                },
                max_in_flight: s.max_in_flight.and_then(Limit::change),
                rate_per_sec: s.rate_per_sec.and_then(Limit::change),
                completed_retention_seconds: s.completed_retention,
            };
            let q = client(&server)?.create_queue(&req).await?;
            show(&q, server.json)
        }
        QueueCmd::Update {
            name,
            settings: s,
            server,
        } => {
            let req = UpdateQueue {
                name: Some(name),
                dead_letter_queue: s.dead_letter_queue,
                max_retries: s.max_retries,
                message_retention_days: s.retention_days,
                visibility_timeout_default: s.visibility_timeout,
                enable_priority: s.enable_priority,
                retry_backoff: s.retry_backoff.map(|b| match b {
                    Backoff::Set(b) => Some(b),
                    Backoff::None => None,
                }),
                max_in_flight: s.max_in_flight.map(|l| l.change().map(|n| n as f64)),
                rate_per_sec: s.rate_per_sec.map(Limit::change),
                completed_retention_seconds: s.completed_retention,
                ..UpdateQueue::default()
            };
            let q = client(&server)?.update_queue(&req).await?;
            show(&q, server.json)
        }
        QueueCmd::Delete { name, yes, server } => {
            let c = client(&server)?;
            if !yes {
                // Also tells an unknown queue apart before asking anything.
                let held = c.stats(&name).await?.message_count;
                confirm(&name, held)?;
            }
            let d = c.delete_queue(&name).await?;
            if server.json {
                return output::json(&d);
            }
            println!(
                "deleted queue {} and its {} message(s)",
                d.queue, d.messages_deleted
            );
            Ok(())
        }
        QueueCmd::Get { name, server } => {
            let q = client(&server)?.get_queue(&name).await?;
            show(&q, server.json)
        }
        QueueCmd::Pause { name, server } => {
            let p = client(&server)?.pause(&name).await?;
            show_paused(&p, server.json)
        }
        QueueCmd::Resume { name, server } => {
            let p = client(&server)?.resume(&name).await?;
            show_paused(&p, server.json)
        }
    }
}

fn show_paused(p: &Paused, json: bool) -> anyhow::Result<()> {
    if json {
        return output::json(p);
    }
    let now = if p.paused { "paused" } else { "running" };
    println!("queue {} is {now}", p.queue);
    Ok(())
}

fn show(q: &QueueRecord, json: bool) -> anyhow::Result<()> {
    if json {
        return output::json(q);
    }
    output::fields(&[
        ("name", q.name.clone()),
        ("type", q.queue_type.as_str().into()),
        (
            "dead_letter_queue",
            q.dead_letter_queue.clone().unwrap_or_else(|| "-".into()),
        ),
        ("max_retries", q.max_retries.to_string()),
        (
            "visibility_timeout_default",
            q.visibility_timeout_default.to_string(),
        ),
        (
            "message_retention_days",
            q.message_retention_days.to_string(),
        ),
        ("enable_priority", q.enable_priority.to_string()),
        ("paused", q.paused.to_string()),
        (
            "retry_backoff",
            q.retry_backoff.map_or_else(
                || "-".into(),
                |b| {
                    format!(
                        "initial={},max={},multiplier={},jitter={}",
                        b.initial_seconds, b.max_seconds, b.multiplier, b.jitter
                    )
                },
            ),
        ),
        (
            "max_in_flight",
            q.max_in_flight
                .map_or_else(|| "-".into(), |n| n.to_string()),
        ),
        (
            "rate_per_sec",
            q.rate_per_sec.map_or_else(|| "-".into(), |r| r.to_string()),
        ),
        (
            "completed_retention_seconds",
            q.completed_retention_seconds.to_string(),
        ),
        ("created_at", q.created_at.to_string()),
    ]);
    Ok(())
}

/// Asks on the terminal; refuses when there is no terminal to ask on.
fn confirm(queue: &str, held: i64) -> anyhow::Result<()> {
    if !std::io::stdin().is_terminal() {
        return Err(crate::errors::Hinted::new(
            format!("refusing to delete queue {queue:?}: stdin is not a terminal to confirm on"),
            "pass --yes to delete it without asking",
        )
        .into());
    }
    let mut err = std::io::stderr();
    write!(
        err,
        "Delete queue {queue:?} and the {held} message(s) it holds? [y/N] "
    )?;
    err.flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    if matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes") {
        Ok(())
    } else {
        anyhow::bail!("delete of {queue:?} cancelled")
    }
}
