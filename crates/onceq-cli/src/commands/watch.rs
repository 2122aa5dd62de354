//! `onceq stats QUEUE --watch`: the counts again every `--interval`
//! seconds, redrawn in place on a terminal; in a pipe each refresh is
//! appended (text blocks separated by a blank line, or one JSON object per
//! line with `--json`). Runs until Ctrl-C.

use std::{io::IsTerminal, time::Duration};

use onceq::Client;

use crate::output;

/// Refreshes `queue`'s stats every `interval` until Ctrl-C.
pub async fn watch(c: &Client, queue: &str, interval: Duration, json: bool) -> anyhow::Result<()> {
    let tty = std::io::stdout().is_terminal();
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let stop = tokio::signal::ctrl_c();
    tokio::pin!(stop);
    let mut drawn = 0usize;
    loop {
        tokio::select! {
            _ = &mut stop => return Ok(()),
            _ = ticker.tick() => {}
        }
        let now = jiff::Timestamp::now().round(jiff::Unit::Second)?;
        let stats = c.stats(queue).await;
        if json {
            match &stats {
                Ok(s) => println!("{}", serde_json::to_string(s)?),
                Err(e) => eprintln!("{now}: {e}"),
            }
            continue;
        }
        let mut lines = vec![format!(
            "{queue} at {now} (every {}s, Ctrl-C to stop)",
            interval.as_secs_f64()
        )];
        match &stats {
            Ok(s) => lines.extend(output::field_lines(&super::client_cmds::stats_fields(s))),
            // A failed refresh is shown and the next one tried: watching
            // through a server restart is what --watch is for.
            Err(e) => lines.push(format!("error: {e}")),
        }
        if tty {
            if drawn > 0 {
                // Up to the first line drawn last time, then clear below.
                print!("\x1b[{drawn}A\x1b[J");
            }
        } else if drawn > 0 {
            println!();
        }
        for line in &lines {
            println!("{line}");
        }
        drawn = lines.len();
    }
}
