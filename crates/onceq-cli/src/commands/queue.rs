//! `onceq queue create|update|delete|get`: one queue's record and settings.

use std::io::{BufRead, IsTerminal, Write};

use clap::{Args, Subcommand};
use onceq_types::{
    QueueRecord, QueueType,
    request::{CreateQueue, UpdateQueue},
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
    /// How long acked (and cancelled) messages are kept, as `completed`,
    /// in seconds (0..=2592000; 0: not at all).
    #[arg(long, value_name = "SECONDS")]
    completed_retention: Option<i64>,
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
    }
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
