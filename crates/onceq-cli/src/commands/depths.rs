//! `onceq queues`: every queue of the key's project with its depths, from
//! the queue list and each queue's stats (the counts the server offers:
//! held, available, in flight, delayed, dead-lettered). `dlq list` reads
//! the same.

use clap::Args;
use onceq_types::{QueueRecord, QueueStats};
use tokio::task::JoinSet;

use super::{ServerArgs, client};
use crate::output;

/// Stats requests in flight at once: a project with hundreds of queues is
/// listed in a few round trips without flooding the server.
const PARALLEL: usize = 8;

#[derive(Debug, Args)]
pub struct QueuesArgs {
    #[command(flatten)]
    server: ServerArgs,
}

/// A queue and its counts.
#[derive(Debug, serde::Serialize)]
pub(super) struct Depth {
    #[serde(flatten)]
    pub record: QueueRecord,
    pub stats: QueueStats,
}

/// Every queue with its stats, by name. A queue deleted between the list
/// and its stats is left out.
pub(super) async fn depths(c: &onceq::Client) -> anyhow::Result<Vec<Depth>> {
    let records = c.list_queues().await?;
    let mut out = Vec::with_capacity(records.len());
    let mut pending = records.into_iter();
    let mut running = JoinSet::new();
    loop {
        while running.len() < PARALLEL {
            let Some(record) = pending.next() else { break };
            let c = c.clone();
            running.spawn(async move {
                let stats = c.stats(&record.name).await;
                (record, stats)
            });
        }
        let Some(done) = running.join_next().await else {
            break;
        };
        match done? {
            (record, Ok(stats)) => out.push(Depth { record, stats }),
            (_, Err(onceq::Error::QueueNotFound(_))) => {}
            (_, Err(e)) => return Err(e.into()),
        }
    }
    out.sort_by(|a, b| a.record.name.cmp(&b.record.name));
    Ok(out)
}

pub async fn queues(a: QueuesArgs) -> anyhow::Result<()> {
    let list = depths(&client(&a.server)?).await?;
    if a.server.json {
        return output::json(&list);
    }
    let rows = list
        .into_iter()
        .map(|d| {
            let s = d.stats;
            vec![
                d.record.name,
                d.record.queue_type.as_str().into(),
                s.message_count.to_string(),
                s.available.to_string(),
                s.in_flight.to_string(),
                s.delayed.to_string(),
                s.dead_lettered.to_string(),
                d.record.dead_letter_queue.unwrap_or_else(|| "-".into()),
                s.oldest_message_age_seconds.to_string(),
            ]
        })
        .collect();
    output::table(
        &[
            "NAME",
            "TYPE",
            "MESSAGES",
            "AVAILABLE",
            "IN FLIGHT",
            "DELAYED",
            "DEAD LETTERED",
            "DLQ",
            "OLDEST S",
        ],
        rows,
    );
    Ok(())
}
