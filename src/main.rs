//! The `agentindex` command: parses the command line, starts tracing and runs the subcommand.

mod backup;
mod card_check;
mod cli;
mod copy;
mod dev;
mod index;
mod logging;
mod migrate;
mod networks;
mod progress;
mod serve;
mod shutdown;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    logging::init();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: starting the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(cli.command.run()) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
