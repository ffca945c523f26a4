//! The `agentindex` command: parses the command line, starts tracing and runs the subcommand.

mod allocator;
mod backup;
mod card_check;
mod cli;
mod copy;
mod dev;
mod index;
mod logging;
mod migrate;
mod networks;
mod probe;
mod progress;
mod serve;
mod shutdown;

use clap::Parser;
use std::process::ExitCode;

/// The allocator. glibc's gives each busy thread an arena of its own and keeps much of what is
/// freed there: a served API's own memory grew with the length of the attack benchmark (440 MiB
/// with 10 s loads, 230 MiB with glibc held to two arenas). mimalloc hands freed pages back:
/// 250 to 330 MiB in the same runs. It is built as mimalloc 2 without transparent huge pages
/// (`Cargo.toml`): mimalloc 3 keeps freed pages for a second before handing them back and asks
/// the kernel for 2 MiB pages, so a backfill of the M workload peaked at 228 to 257 MiB
/// resident; mimalloc 2 hands them back after 10 ms by default, 1 ms as this binary runs it
/// (`allocator.rs`), and the same backfill peaks at about 120 MiB in about the same time
/// (BENCHMARKS.md, "Where a backfill's memory goes", "A backfill's peak memory by default").
/// It also stands in
/// for C's `malloc` (the `override` feature), so SQLite, linked into the binary and allocating
/// from one worker thread per connection, shares it: through glibc those threads filled up to
/// 16 arenas that kept their fragments, three quarters of a four-hour soak's growth
/// (BENCHMARKS.md, "Soak").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let unsettled = allocator::settle();
    let cli = cli::Cli::parse();
    logging::init();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: starting the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(unsettled) = unsettled {
        tracing::warn!("{}", unsettled.reason);
        #[cfg(unix)]
        if unsettled.broken_pipes_kill {
            runtime.block_on(async { allocator::survive_broken_pipes() });
        }
    }
    match runtime.block_on(cli.command.run()) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
