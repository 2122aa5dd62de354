//! `onceq projects list|set-credit|set-rate`: account settings of a
//! project, on the store directly or with `--url` through a server's admin
//! API ([`super::admin`]). Running servers pick changes up within one
//! account sync interval (1 s by default).

use clap::Subcommand;
use onceq_types::admin::ProjectLimits;

use super::{RateArgs, admin::AdminArgs};
use crate::output;

#[derive(Debug, Subcommand)]
pub enum ProjectsCmd {
    /// List projects with their credit, spend and rate limit.
    List {
        #[command(flatten)]
        target: AdminArgs,
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
        // A negative number is a value (refused by the range check), not a flag.
        #[arg(allow_negative_numbers = true)]
        usd: String,
        #[command(flatten)]
        target: AdminArgs,
    },
    /// Give a project its own rate limit (or lift it with --clear).
    SetRate {
        /// The project.
        name: String,
        #[command(flatten)]
        rate: RateArgs,
        #[command(flatten)]
        target: AdminArgs,
    },
}

pub async fn run(cmd: ProjectsCmd) -> anyhow::Result<()> {
    match cmd {
        ProjectsCmd::List { target, json } => {
            let projects = target.open().await?.projects().await?;
            if json {
                return output::json(&projects);
            }
            let rows = projects
                .into_iter()
                .map(|p| {
                    vec![
                        p.name,
                        p.credit_limit_usd
                            .map(|usd| usd.to_string())
                            .unwrap_or_else(|| "none".into()),
                        p.spent_usd.to_string(),
                        super::describe_rate(p.rate_per_sec, p.rate_burst),
                    ]
                })
                .collect();
            output::table(&["PROJECT", "CREDIT USD", "SPENT USD", "RATE"], rows);
        }
        ProjectsCmd::SetCredit { name, usd, target } => {
            let req = ProjectLimits {
                project: Some(name),
                credit_limit_usd: Some(parse_usd(&usd)?),
                ..ProjectLimits::default()
            };
            let p = target.open().await?.projects_limits(req).await?;
            match p.credit_limit_usd {
                Some(usd) => println!("{}: credit limit {usd} USD", p.name),
                None => println!("{}: no credit limit", p.name),
            }
        }
        ProjectsCmd::SetRate { name, rate, target } => {
            let req = ProjectLimits {
                project: Some(name),
                rate_per_sec: Some(rate.rate),
                rate_burst: rate.burst.map(i64::from),
                ..ProjectLimits::default()
            };
            let p = target.open().await?.projects_limits(req).await?;
            println!(
                "{}: rate limit {}",
                p.name,
                super::describe_rate(p.rate_per_sec, p.rate_burst)
            );
        }
    }
    Ok(())
}

/// `12.5` USD, or `none` for no limit (the range is the server's rule).
fn parse_usd(text: &str) -> anyhow::Result<Option<f64>> {
    if text.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    let usd = text
        .parse()
        .map_err(|_| anyhow::anyhow!("USD must be a number like 25 or 0.5, or none"))?;
    Ok(Some(usd))
}
