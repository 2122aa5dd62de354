//! The `onceq` command. Parses arguments and calls the libraries; each
//! subcommand lives in `commands/`.

mod commands;
mod output;
mod progress;

use clap::Parser;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = commands::Cli::parse();
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
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    };
    telemetry.shutdown();
    code
}
