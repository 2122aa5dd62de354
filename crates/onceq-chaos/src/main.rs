//! `chaos`: parse the flags, run, print the report; exit 1 when anything
//! was lost or duplicated (see `docs/chaos.md`).

use clap::Parser;

#[tokio::main]
async fn main() -> anyhow::Result<std::process::ExitCode> {
    let config = onceq_chaos::config::Args::parse().resolve();
    let report = onceq_chaos::run(config).await?;
    println!("{report}");
    Ok(if report.passed() {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    })
}
