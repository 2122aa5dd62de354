//! `onceq ack-batch QUEUE ID:RECEIPT...`: up to 10 messages you hold acked
//! in one call (`POST /v1/queue/ack_batch`), each answered.

use clap::Args;
use onceq::BatchAck;

use super::{ServerArgs, client};
use crate::output;

#[derive(Debug, Args)]
pub struct AckBatchArgs {
    /// The queue.
    queue: String,
    /// 1 to 10 leases, each `MESSAGE_ID:RECEIPT` as consume printed them
    /// (each message once).
    #[arg(required = true, num_args = 1..=10, value_name = "ID:RECEIPT")]
    leases: Vec<String>,
    #[command(flatten)]
    server: ServerArgs,
}

pub async fn ack_batch(a: AckBatchArgs) -> anyhow::Result<()> {
    let acks = a
        .leases
        .iter()
        .map(|lease| {
            let (id, receipt) = lease.split_once(':').ok_or_else(|| {
                crate::errors::Hinted::new(
                    format!("{lease:?} is not MESSAGE_ID:RECEIPT"),
                    "give each lease as its id and receipt joined by a colon, e.g. qmsg_…:rcpt_…",
                )
            })?;
            Ok(BatchAck {
                message_id: id.to_owned(),
                receipt: receipt.to_owned(),
                result: None,
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let answer = client(&a.server)?.ack_batch(&a.queue, acks).await?;
    if a.server.json {
        return output::json(&answer);
    }
    for ok in &answer.successful {
        println!("acked {}", ok.message_id);
    }
    for failed in &answer.failed {
        println!(
            "not acked {}: {} ({})",
            failed.message_id, failed.code, failed.message
        );
    }
    if !answer.failed.is_empty() {
        return Err(crate::errors::Hinted::new(
            format!("{} of {} not acked", answer.failed.len(), a.leases.len()),
            "their leases expired or they were acked already; see where each is with `onceq message get QUEUE MESSAGE_ID`",
        )
        .into());
    }
    Ok(())
}
