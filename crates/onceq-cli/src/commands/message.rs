//! `onceq message get QUEUE MESSAGE_ID`: one message wherever its queue
//! keeps it (in the queue, its dead-letter queue, or kept finished), with
//! its attempts; `onceq cancel QUEUE MESSAGE_ID`.

use clap::{Args, Subcommand};

use super::{ServerArgs, client};
use crate::output;

#[derive(Debug, Subcommand)]
pub enum MessageCmd {
    /// Show one message: its state, payload, lease and hand-outs.
    Get {
        /// The queue (a dead letter is found under its source queue too).
        queue: String,
        /// The message's id (qmsg_...).
        message_id: String,
        #[command(flatten)]
        server: ServerArgs,
    },
}

pub async fn run(cmd: MessageCmd) -> anyhow::Result<()> {
    let MessageCmd::Get {
        queue,
        message_id,
        server,
    } = cmd;
    let m = client(&server)?.get_message(&queue, &message_id).await?;
    if server.json {
        return output::json(&m);
    }
    let opt = |t: Option<String>| t.unwrap_or_else(|| "-".into());
    let state = serde_json::to_value(m.state)?;
    output::fields(&[
        ("message_id", m.message_id.clone()),
        ("queue", m.queue.clone()),
        ("state", state.as_str().unwrap_or_default().to_owned()),
        ("delivery_count", m.delivery_count.to_string()),
        ("priority", m.priority.to_string()),
        ("message_group_id", opt(m.message_group_id.clone())),
        ("idempotency_key", opt(m.idempotency_key.clone())),
        ("created_at", m.created_at.to_string()),
        ("visible_at", m.visible_at.to_string()),
        (
            "lease_expires_at",
            opt(m.lease_expires_at.map(|t| t.to_string())),
        ),
        ("completed_at", opt(m.completed_at.map(|t| t.to_string()))),
        ("last_error", opt(m.last_error.clone())),
        (
            "result",
            match &m.result {
                Some(r) => r.get().to_owned(),
                None if m.payload_withheld => "(withheld)".into(),
                None => "-".into(),
            },
        ),
        (
            "payload",
            match &m.payload {
                Some(p) => p.get().to_owned(),
                // The key lacks `peek` (docs/security.md).
                None if m.payload_withheld => {
                    "(withheld: this API key lacks the peek action)".into()
                }
                None => "-".into(),
            },
        ),
    ]);
    if !m.attempts.is_empty() {
        println!("attempts (oldest first):");
        for a in &m.attempts {
            let outcome = serde_json::to_value(a.outcome)?;
            println!(
                "  #{} {} {} -> {}{}",
                a.delivery_count,
                outcome.as_str().unwrap_or_default(),
                opt(a.consumed_at.map(|t| t.to_string())),
                a.ended_at,
                a.error
                    .as_ref()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default()
            );
        }
    }
    Ok(())
}

/// `onceq cancel`.
#[derive(Debug, Args)]
pub struct CancelArgs {
    /// The queue.
    queue: String,
    /// The message's id (qmsg_...): waiting, delayed or in flight.
    message_id: String,
    #[command(flatten)]
    server: ServerArgs,
}

pub async fn cancel(a: CancelArgs) -> anyhow::Result<()> {
    let cancelled = client(&a.server)?.cancel(&a.queue, &a.message_id).await?;
    if a.server.json {
        return output::json(&serde_json::json!({ "cancelled": cancelled }));
    }
    if !cancelled {
        anyhow::bail!(
            "queue {:?} holds no message {} (a dead letter is cancelled in its dead-letter queue)",
            a.queue,
            a.message_id
        );
    }
    println!("cancelled {}", a.message_id);
    Ok(())
}
