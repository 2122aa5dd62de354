//! `onceq dlq redrive QUEUE`: moves dead letters back in chunks, so a large
//! dead-letter queue shows progress (and no single call holds the store for
//! long).

use clap::Subcommand;
use onceq_types::reply::Redriven;

use super::{ServerArgs, client};
use crate::{output, progress};

/// Messages moved per call unless `--chunk` says otherwise.
const CHUNK: i64 = 500;

#[derive(Debug, Subcommand)]
pub enum DlqCmd {
    /// Move dead-lettered messages back into QUEUE.
    Redrive {
        /// The source queue (its DLQ is drained into it).
        queue: String,
        /// At most this many (default: every message its DLQ holds now).
        #[arg(long, value_parser = clap::value_parser!(i64).range(1..))]
        max: Option<i64>,
        /// Messages moved per request.
        #[arg(long, default_value_t = CHUNK, value_parser = clap::value_parser!(i64).range(1..=10_000))]
        chunk: i64,
        #[command(flatten)]
        server: ServerArgs,
    },
}

pub async fn run(cmd: DlqCmd) -> anyhow::Result<()> {
    match cmd {
        DlqCmd::Redrive {
            queue,
            max,
            chunk,
            server,
        } => redrive(&queue, max, chunk, &server).await,
    }
}

async fn redrive(
    queue: &str,
    max: Option<i64>,
    chunk: i64,
    server: &ServerArgs,
) -> anyhow::Result<()> {
    let c = client(server)?;
    // What the DLQ holds now bounds the work: messages dead-lettered while
    // this runs are left for the next redrive rather than chased forever.
    let stats = c.stats(queue).await?;
    let Some(dead_letter_queue) = stats.dead_letter_queue else {
        anyhow::bail!("queue {queue:?} has no dead-letter queue");
    };
    let target = max.map_or(stats.dead_lettered, |m| m.min(stats.dead_lettered));
    let pb = progress::bar(target as u64, &format!("redriving {queue}"));
    let mut moved = 0;
    while moved < target {
        let ask = (target - moved).min(chunk);
        let r = c.redrive(queue, Some(ask)).await?;
        moved += r.redriven;
        pb.inc(r.redriven as u64);
        if r.redriven < ask {
            break; // drained sooner: someone else redrove or purged
        }
    }
    pb.finish_and_clear();
    let r = Redriven {
        queue: queue.to_owned(),
        dead_letter_queue,
        redriven: moved,
    };
    if server.json {
        return output::json(&r);
    }
    println!(
        "moved {} message(s) from {} back to {}",
        r.redriven, r.dead_letter_queue, r.queue
    );
    Ok(())
}
