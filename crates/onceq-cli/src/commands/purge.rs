//! `onceq purge QUEUE`: deletes every message a queue holds, after a
//! confirmation on a terminal (or `--yes`).

use std::io::{BufRead, IsTerminal, Write};

use clap::Args;

use super::{ServerArgs, client};
use crate::{output, progress};

#[derive(Debug, Args)]
pub struct PurgeArgs {
    /// The queue whose messages are all deleted (in-flight ones too).
    queue: String,
    /// Do not ask first. Required when stdin is not a terminal.
    #[arg(short = 'y', long)]
    yes: bool,
    #[command(flatten)]
    server: ServerArgs,
}

pub async fn run(a: PurgeArgs) -> anyhow::Result<()> {
    let c = client(&a.server)?;
    if !a.yes {
        // Also tells an unknown queue apart before asking anything.
        let held = c.stats(&a.queue).await?.message_count;
        confirm(&a.queue, held)?;
    }
    let spinner = progress::spinner(&format!("purging {}", a.queue));
    let purged = c.purge(&a.queue).await;
    spinner.finish_and_clear();
    let purged = purged?;
    if a.server.json {
        return output::json(&serde_json::json!({ "queue": a.queue, "purged": purged }));
    }
    println!("purged {purged} message(s) from {}", a.queue);
    Ok(())
}

/// Asks on the terminal; refuses when there is no terminal to ask on.
fn confirm(queue: &str, held: i64) -> anyhow::Result<()> {
    if !std::io::stdin().is_terminal() {
        anyhow::bail!(
            "refusing to purge {queue:?} without --yes: stdin is not a terminal to confirm on"
        );
    }
    let mut err = std::io::stderr();
    write!(
        err,
        "Delete all {held} message(s) held by {queue:?}, in-flight ones included? [y/N] "
    )?;
    err.flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    if matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes") {
        Ok(())
    } else {
        anyhow::bail!("purge of {queue:?} cancelled")
    }
}
