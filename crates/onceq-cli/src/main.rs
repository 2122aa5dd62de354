//! The `onceq` command. Parses arguments and calls the libraries; each
//! subcommand lives in `commands/`.
//!
//! - `commands`: the subcommands, one module per group.
//! - `errors`: how a failure is told: each cause once, then a hint.
//! - `output`: text tables and fields for people, JSON for scripts.
//! - `progress`: progress bars and spinners on a terminal only.
//! - `runtime`: the tokio runtime, and `serve`'s thread count.
//! - `doc_check` (tests only): docs/configuration.md's and docs/cli.md's
//!   flag tables checked against these clap definitions.

mod commands;
#[cfg(test)]
mod doc_check;
mod errors;
mod output;
mod progress;
mod runtime;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = commands::Cli::parse();
    let runtime = match runtime::build(cli.worker_threads()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    runtime.block_on(run(cli))
}

async fn run(cli: commands::Cli) -> std::process::ExitCode {
    let telemetry = match onceq_server::telemetry::init(cli.log_format()) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let code = match commands::run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}", errors::render(&e));
            std::process::ExitCode::FAILURE
        }
    };
    telemetry.shutdown();
    code
}
