//! The `onceq` command. Parses arguments and calls the libraries; each
//! subcommand lives in `commands/`.
//!
//! - `commands`: the subcommands, one module per group.
//! - `errors`: how a failure is told: each cause once, then a hint.
//! - `output`: text tables and fields for people, JSON for scripts.
//! - `progress`: progress bars and spinners on a terminal only.

mod commands;
mod errors;
mod output;
mod progress;

use clap::Parser;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = commands::Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("ONCEQ_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(commands::DEFAULT_LOG)),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    match commands::run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}", errors::render(&e));
            std::process::ExitCode::FAILURE
        }
    }
}
