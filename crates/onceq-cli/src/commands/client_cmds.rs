//! Commands that talk to a running server: publish (one message, or a
//! file of them: `bulk`), consume, stats (once, or `--watch`).

use std::{path::PathBuf, time::Duration};

use clap::Args;
use onceq::{ConsumeOptions, PublishOptions};
use onceq_types::QueueStats;

use super::{ServerArgs, bulk, client, watch};
use crate::output;

#[derive(Debug, Args)]
pub struct PublishArgs {
    /// The queue (created on first publish).
    queue: String,
    /// The payload, as JSON.
    #[arg(required_unless_present = "file")]
    payload: Option<String>,
    /// Publish one message per line of FILE ("-" for stdin) instead: each
    /// line a JSON payload, or a publish body {"payload": ..., "priority":
    /// ..., ...}. Sent ten per request; a progress bar shows on a terminal.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["payload", "key"])]
    file: Option<PathBuf>,
    /// Idempotency key: the same key publishes once.
    #[arg(long)]
    key: Option<String>,
    /// Delay in seconds (with --file: for lines that set none).
    #[arg(long)]
    delay: Option<i64>,
    /// Priority, higher first (with --file: for lines that set none).
    #[arg(long)]
    priority: Option<i64>,
    #[command(flatten)]
    server: ServerArgs,
}

#[derive(Debug, Args)]
pub struct ConsumeArgs {
    /// The queue.
    queue: String,
    /// How many messages (1..=10).
    #[arg(short = 'n', long, default_value_t = 1)]
    max: u32,
    /// Long-poll up to this many seconds.
    #[arg(long, default_value_t = 0)]
    wait: u32,
    /// Lease length in seconds (default: the queue's).
    #[arg(long)]
    visibility_timeout: Option<u32>,
    /// Ack each message after printing it.
    #[arg(long)]
    ack: bool,
    #[command(flatten)]
    server: ServerArgs,
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// The queue.
    queue: String,
    /// Refresh until Ctrl-C: in place on a terminal, appended in a pipe
    /// (one JSON object per line with --json).
    #[arg(long)]
    watch: bool,
    /// Seconds between refreshes with --watch.
    #[arg(long, value_name = "SECS", default_value_t = 2.0, requires = "watch", value_parser = interval)]
    interval: f64,
    #[command(flatten)]
    server: ServerArgs,
}

fn interval(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.1..=86_400.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "must be a number of seconds from 0.1 to 86400 (got {s:?})"
        )),
    }
}

pub async fn publish(a: PublishArgs) -> anyhow::Result<()> {
    if let Some(file) = &a.file {
        let defaults = bulk::Defaults {
            delay_seconds: a.delay,
            priority: a.priority,
        };
        return bulk::publish_file(&a.queue, file, defaults, &a.server).await;
    }
    let payload = a.payload.as_deref().unwrap_or_default();
    let payload: serde_json::Value = crate::errors::decode(payload).map_err(|e| {
        crate::errors::Hinted::new(
            format!("PAYLOAD must be valid JSON: {e}"),
            "quote it for your shell: onceq publish QUEUE '{\"job\": \"export\"}'",
        )
    })?;
    let out = client(&a.server)?
        .publish(
            &a.queue,
            &payload,
            PublishOptions {
                idempotency_key: a.key,
                delay_seconds: a.delay,
                priority: a.priority,
                ..PublishOptions::default()
            },
        )
        .await?;
    if a.server.json {
        return output::json(&serde_json::json!({
            "message": out.message, "idempotent_replay": out.replay,
            "idempotency_key": out.idempotency_key,
        }));
    }
    output::fields(&[
        ("message_id", out.message.message_id.clone()),
        ("queue", out.message.queue.clone()),
        ("status", out.message.status.as_str().into()),
        ("replay", out.replay.to_string()),
        ("idempotency_key", out.idempotency_key),
    ]);
    Ok(())
}

pub async fn consume(a: ConsumeArgs) -> anyhow::Result<()> {
    let c = client(&a.server)?;
    let items = c
        .consume(
            &a.queue,
            ConsumeOptions {
                max_messages: a.max,
                visibility_timeout: a.visibility_timeout,
                wait_seconds: a.wait,
            },
        )
        .await?;
    let mut acked = Vec::new();
    if a.ack && !items.is_empty() {
        // The whole batch in one call (`ack_batch`).
        let acks = items
            .iter()
            .map(|m| onceq::BatchAck {
                message_id: m.message_id.clone(),
                receipt: m.receipt.clone(),
                result: None,
            })
            .collect();
        let answer = c.ack_batch(&a.queue, acks).await?;
        acked = items
            .iter()
            .map(|m| {
                answer
                    .successful
                    .iter()
                    .any(|s| s.message_id == m.message_id)
            })
            .collect();
    }
    if a.server.json {
        return output::json(&items);
    }
    if items.is_empty() {
        println!("(no messages)");
    }
    for (i, m) in items.iter().enumerate() {
        output::fields(&[
            ("message_id", m.message_id.clone()),
            ("delivery_count", m.delivery_count.to_string()),
            ("receipt", m.receipt.clone()),
            ("lease_expires_at", m.lease_expires_at.to_string()),
            ("payload", m.payload.get().to_owned()),
            (
                "acked",
                acked
                    .get(i)
                    .map(|b| b.to_string())
                    .unwrap_or_else(|| "no (use --ack)".into()),
            ),
        ]);
        println!();
    }
    Ok(())
}

pub async fn stats(a: StatsArgs) -> anyhow::Result<()> {
    let c = client(&a.server)?;
    if a.watch {
        let every = Duration::from_secs_f64(a.interval);
        return watch::watch(&c, &a.queue, every, a.server.json).await;
    }
    let s = c.stats(&a.queue).await?;
    if a.server.json {
        return output::json(&s);
    }
    output::fields(&stats_fields(&s));
    Ok(())
}

/// The lines `stats` prints.
pub(super) fn stats_fields(s: &QueueStats) -> Vec<(&'static str, String)> {
    vec![
        ("queue", s.queue.clone()),
        ("message_count", s.message_count.to_string()),
        ("available", s.available.to_string()),
        ("delayed", s.delayed.to_string()),
        ("in_flight", s.in_flight.to_string()),
        ("dead_lettered", s.dead_lettered.to_string()),
        (
            "dead_letter_queue",
            s.dead_letter_queue.clone().unwrap_or_else(|| "-".into()),
        ),
        (
            "oldest_message_age_seconds",
            s.oldest_message_age_seconds.to_string(),
        ),
        ("paused", s.paused.to_string()),
    ]
}
