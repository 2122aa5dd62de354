//! `onceq dlq`: `list` (every queue's dead-letter queue and how many
//! dead letters it holds), `peek QUEUE` (show a few dead letters and give
//! them back) and `redrive QUEUE` (move them back in chunks, so a large
//! dead-letter queue shows progress and no single call holds the store for
//! long).

use clap::Subcommand;
use onceq::{ConsumeOptions, NackOptions};
use onceq_types::reply::Redriven;

use super::{ServerArgs, client, depths};
use crate::{errors::Hinted, output, progress};

/// How long `peek` holds the dead letters it shows: long enough to print
/// them, short enough that a crash of this command gives them back soon.
const PEEK_LEASE_SECONDS: u32 = 30;

/// Messages moved per call unless `--chunk` says otherwise.
const CHUNK: i64 = 500;

#[derive(Debug, Subcommand)]
pub enum DlqCmd {
    /// List every queue that has a dead-letter queue, with its dead letters.
    List {
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Show up to N dead letters of QUEUE, oldest first, and give them back.
    Peek {
        /// The source queue (its dead-letter queue is read).
        queue: String,
        /// How many (1..=10).
        #[arg(short = 'n', long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=10))]
        max: u32,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Move dead-lettered messages back into QUEUE.
    Redrive {
        /// The source queue (its DLQ is drained into it).
        queue: String,
        /// At most this many (default: every message its DLQ holds now).
        #[arg(long, value_parser = clap::value_parser!(i64).range(1..))]
        max: Option<i64>,
        /// Only this dead letter (repeat for several, at most 100).
        #[arg(long = "id", value_name = "MESSAGE_ID", conflicts_with = "max")]
        ids: Vec<String>,
        /// Messages moved per request.
        #[arg(long, default_value_t = CHUNK, value_parser = clap::value_parser!(i64).range(1..=10_000))]
        chunk: i64,
        #[command(flatten)]
        server: ServerArgs,
    },
}

pub async fn run(cmd: DlqCmd) -> anyhow::Result<()> {
    match cmd {
        DlqCmd::List { server } => list(&server).await,
        DlqCmd::Peek { queue, max, server } => peek(&queue, max, &server).await,
        DlqCmd::Redrive {
            queue, ids, server, ..
        } if !ids.is_empty() => redrive_ids(&queue, &ids, &server).await,
        DlqCmd::Redrive {
            queue,
            max,
            chunk,
            server,
            ..
        } => redrive(&queue, max, chunk, &server).await,
    }
}

/// `redrive --id ...`: the chosen dead letters, in one call.
async fn redrive_ids(queue: &str, ids: &[String], server: &ServerArgs) -> anyhow::Result<()> {
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let r = client(server)?.redrive_ids(queue, &ids).await?;
    if server.json {
        return output::json(&r);
    }
    println!(
        "redrove {} message(s) from {} into {}",
        r.redriven, r.dead_letter_queue, r.queue
    );
    for id in r.not_found.iter().flatten() {
        println!("  not in the dead-letter queue: {id}");
    }
    for id in r.in_flight.iter().flatten() {
        println!("  held by a consumer of the dead-letter queue, left there: {id}");
    }
    Ok(())
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
        not_found: None,
        in_flight: None,
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

async fn list(server: &ServerArgs) -> anyhow::Result<()> {
    let rows: Vec<_> = depths::depths(&client(server)?)
        .await?
        .into_iter()
        .filter_map(|d| {
            let dlq = d.stats.dead_letter_queue?;
            Some((d.record.name, dlq, d.stats.dead_lettered))
        })
        .collect();
    if server.json {
        let items: Vec<_> = rows
            .iter()
            .map(|(q, dlq, n)| {
                serde_json::json!({"queue": q, "dead_letter_queue": dlq, "dead_lettered": n})
            })
            .collect();
        return output::json(&serde_json::json!({ "items": items }));
    }
    let rows = rows
        .into_iter()
        .map(|(q, dlq, n)| vec![q, dlq, n.to_string()])
        .collect();
    output::table(&["QUEUE", "DLQ", "DEAD LETTERED"], rows);
    Ok(())
}

/// Takes up to `max` dead letters under a short lease, prints them and
/// nacks each straight back: they stay dead letters, in their order, with
/// one more hand-out counted (a redrive resets the count).
async fn peek(queue: &str, max: u32, server: &ServerArgs) -> anyhow::Result<()> {
    let c = client(server)?;
    let record = c.get_queue(queue).await?;
    let Some(dlq) = record.dead_letter_queue else {
        return Err(Hinted::new(
            format!("queue {queue:?} has no dead-letter queue"),
            "give it one with `onceq queue update QUEUE --dead-letter-queue DLQ`",
        )
        .into());
    };
    // Giving a peeked message back is a failed hand-out: where the DLQ has
    // a DLQ of its own, that could move a dead letter on.
    if let Some(next) = c.get_queue(&dlq).await?.dead_letter_queue {
        return Err(Hinted::new(
            format!("dead-letter queue {dlq:?} dead-letters into {next:?}: peeking could move its messages there"),
            format!("consume from {dlq:?} instead: `onceq consume {dlq}`"),
        )
        .into());
    }
    let items = c
        .consume(
            &dlq,
            ConsumeOptions {
                max_messages: max,
                visibility_timeout: Some(PEEK_LEASE_SECONDS),
                wait_seconds: 0,
            },
        )
        .await?;
    for m in &items {
        let back = NackOptions {
            receipt: Some(m.receipt.clone()),
            ..NackOptions::default()
        };
        c.nack(&dlq, &m.message_id, back).await?;
    }
    if server.json {
        return output::json(&items);
    }
    if items.is_empty() {
        println!("(no dead letters in {dlq})");
    }
    for m in &items {
        output::fields(&[
            ("message_id", m.message_id.clone()),
            ("dead_letter_queue", dlq.clone()),
            ("created_at", m.created_at.to_string()),
            ("payload", m.payload.get().to_owned()),
        ]);
        println!();
    }
    Ok(())
}
