//! `onceq message get QUEUE MESSAGE_ID`: one message wherever its queue
//! keeps it (in the queue or its dead-letter queue).

use clap::Subcommand;

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
        ("last_error", opt(m.last_error.clone())),
        ("payload", m.payload.get().to_owned()),
    ]);
    Ok(())
}
