//! `onceq projects list|set-credit|set-rate`: account settings of a
//! project, straight on the store. Running servers pick changes up within
//! one account sync interval (1 s by default).

use clap::Subcommand;

use super::{RateArgs, StoreArgs};
use crate::output;

#[derive(Debug, Subcommand)]
pub enum ProjectsCmd {
    /// List projects with their credit, spend and rate limit.
    List {
        #[command(flatten)]
        store: StoreArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Set the most a project may spend in total, in USD (`none` lifts the
    /// limit). Past it, billable calls answer 402 INSUFFICIENT_CREDIT.
    SetCredit {
        /// The project.
        name: String,
        /// USD, e.g. 25 or 0.5; or `none`.
        usd: String,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Give a project its own rate limit (or lift it with --clear).
    SetRate {
        /// The project.
        name: String,
        #[command(flatten)]
        rate: RateArgs,
        #[command(flatten)]
        store: StoreArgs,
    },
}

pub async fn run(cmd: ProjectsCmd) -> anyhow::Result<()> {
    match cmd {
        ProjectsCmd::List { store, json } => {
            let store = super::open(&store).await?;
            let projects = store.project_list().await?;
            let usd = |m: u64| onceq_types::account::micros_to_usd(m);
            if json {
                let rows: Vec<_> = projects
                    .iter()
                    .map(|p| {
                        serde_json::json!({
                            "name": p.name, "created_at": p.created_at,
                            "credit_limit_usd": p.credit_limit_micros.map(usd),
                            "spent_usd": usd(p.spent_micros),
                            "rate_per_sec": p.rate.map(|r| r.per_sec),
                            "rate_burst": p.rate.map(|r| r.burst),
                        })
                    })
                    .collect();
                return output::json(&rows);
            }
            let rows = projects
                .iter()
                .map(|p| {
                    vec![
                        p.name.clone(),
                        p.credit_limit_micros
                            .map(|m| usd(m).to_string())
                            .unwrap_or_else(|| "none".into()),
                        usd(p.spent_micros).to_string(),
                        super::describe_rate(p.rate),
                    ]
                })
                .collect();
            output::table(&["PROJECT", "CREDIT USD", "SPENT USD", "RATE"], rows);
        }
        ProjectsCmd::SetCredit { name, usd, store } => {
            let limit = parse_usd(&usd)?;
            let store = super::open(&store).await?;
            anyhow::ensure!(
                store.project_set_credit(&name, limit).await?,
                "no project {name:?} (a project exists once a key names it)"
            );
            match limit {
                Some(m) => println!(
                    "{name}: credit limit {} USD",
                    onceq_types::account::micros_to_usd(m)
                ),
                None => println!("{name}: no credit limit"),
            }
        }
        ProjectsCmd::SetRate { name, rate, store } => {
            let limit = rate.limit()?;
            let store = super::open(&store).await?;
            anyhow::ensure!(
                store.project_set_rate(&name, limit).await?,
                "no project {name:?} (a project exists once a key names it)"
            );
            println!("{name}: rate limit {}", super::describe_rate(limit));
        }
    }
    Ok(())
}

/// `12.5` USD as micro-USD; `none` for no limit.
fn parse_usd(text: &str) -> anyhow::Result<Option<u64>> {
    if text.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    let usd: f64 = text
        .parse()
        .map_err(|_| anyhow::anyhow!("USD must be a number like 25 or 0.5, or none"))?;
    anyhow::ensure!(
        usd.is_finite() && (0.0..=1e9).contains(&usd),
        "USD must be between 0 and 1000000000"
    );
    Ok(Some((usd * 1e6).round() as u64))
}
