//! What a consumer does by hand with a message it took (`onceq consume`
//! prints the receipt): `ack`, `nack` and `extend`.

use clap::Args;
use onceq::NackOptions;

use super::{ServerArgs, client};
use crate::output;

/// The lease a command names.
#[derive(Debug, Args)]
pub struct LeaseArgs {
    /// The queue.
    queue: String,
    /// The message's id (qmsg_...).
    message_id: String,
    /// The lease's receipt (rcpt_...), as consume printed it: without it
    /// any holder's lease is ended, a late one included.
    #[arg(long)]
    receipt: Option<String>,
}

#[derive(Debug, Args)]
pub struct AckArgs {
    #[command(flatten)]
    lease: LeaseArgs,
    /// What the work produced, as JSON (at most 64 KiB): kept as the
    /// message's result while its queue retains completed messages.
    #[arg(long, value_name = "JSON")]
    result: Option<String>,
    #[command(flatten)]
    server: ServerArgs,
}

#[derive(Debug, Args)]
pub struct NackArgs {
    #[command(flatten)]
    lease: LeaseArgs,
    /// Why the work failed (at most 8 KiB), kept as the message's last
    /// error by servers that record attempts.
    #[arg(long, value_name = "TEXT")]
    error: Option<String>,
    /// Keep the message back this many seconds before it is handed out again.
    #[arg(long, value_name = "SECONDS")]
    delay: Option<i64>,
    /// Send it to the dead-letter queue now instead of back to the queue.
    #[arg(long, conflicts_with = "delay")]
    dead_letter: bool,
    #[command(flatten)]
    server: ServerArgs,
}

#[derive(Debug, Args)]
pub struct ExtendArgs {
    #[command(flatten)]
    lease: LeaseArgs,
    /// The lease's new length, in seconds from now (0..=43200).
    #[arg(long, value_name = "SECONDS")]
    visibility_timeout: u32,
    #[command(flatten)]
    server: ServerArgs,
}

pub async fn ack(a: AckArgs) -> anyhow::Result<()> {
    let l = &a.lease;
    let result = a
        .result
        .as_deref()
        .map(|r| serde_json::value::RawValue::from_string(r.to_owned()))
        .transpose()
        .map_err(|e| anyhow::anyhow!("--result must be JSON: {e}"))?;
    let acked = client(&a.server)?
        .ack_with_result(&l.queue, &l.message_id, l.receipt.as_deref(), result)
        .await?;
    if a.server.json {
        return output::json(&serde_json::json!({ "acked": acked }));
    }
    report(acked, &format!("acked {}", l.message_id), l)
}

pub async fn nack(a: NackArgs) -> anyhow::Result<()> {
    let l = &a.lease;
    let opts = NackOptions {
        receipt: l.receipt.clone(),
        requeue: !a.dead_letter,
        delay_seconds: a.delay,
        error: a.error.clone(),
    };
    let n = client(&a.server)?
        .nack(&l.queue, &l.message_id, opts)
        .await?;
    if a.server.json {
        return output::json(&n);
    }
    let done = match (n.requeued, n.dead_lettered) {
        (_, true) => format!(
            "dead-lettered {} after {} hand-out(s)",
            l.message_id, n.delivery_count
        ),
        (true, _) => format!("gave {} back to {}", l.message_id, l.queue),
        _ => format!("nacked {}", l.message_id),
    };
    report(n.nacked, &done, l)
}

pub async fn extend(a: ExtendArgs) -> anyhow::Result<()> {
    let l = &a.lease;
    let e = client(&a.server)?
        .extend(
            &l.queue,
            &l.message_id,
            l.receipt.as_deref(),
            a.visibility_timeout,
        )
        .await?;
    if a.server.json {
        return output::json(&e);
    }
    let until = e.lease_expires_at.map_or("-".into(), |t| t.to_string());
    report(
        e.extended,
        &format!("lease of {} now ends at {until}", l.message_id),
        l,
    )
}

/// Prints what was done, or fails saying why nothing was: the server's
/// `false` means the lease was not (or no longer) held.
fn report(done: bool, what: &str, l: &LeaseArgs) -> anyhow::Result<()> {
    if done {
        println!("{what}");
        return Ok(());
    }
    let held = match l.receipt {
        Some(_) => "under this receipt's lease",
        None => "by anyone",
    };
    Err(crate::errors::Hinted::new(
        format!(
            "{} of {} is not held {held}: nothing done",
            l.message_id, l.queue
        ),
        "its lease expired or it was acked already; see where it is with `onceq message get QUEUE MESSAGE_ID`",
    )
    .into())
}
