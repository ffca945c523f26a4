//! The real `agentindex serve` binary run by a benchmark: started on a config, its announced
//! address read from its first line, stopped when dropped, and tied to the benchmark's process
//! so it stops however that ends (`agentindex_contracts::tied`).

#![allow(dead_code)]

use agentindex_contracts::tied::{TiedChild, TiedCommand};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// How long a benchmark's process gets between SIGTERM and SIGKILL when it is stopped.
pub(crate) const GRACE: Duration = Duration::from_secs(5);

/// A running `agentindex serve`, stopped when dropped.
pub(crate) struct ServeProcess {
    pub(crate) child: TiedChild,
    /// `http://127.0.0.1:PORT`, as it announced.
    pub(crate) base: String,
}

/// Starts `binary serve --config config` logging at `log_level` to `stderr`; `spawned` gets the
/// process id before the address is read (to put it in a cgroup, say).
pub(crate) fn start(
    binary: &str,
    config: &Path,
    log_level: &str,
    stderr: Stdio,
    spawned: impl FnOnce(u32) -> anyhow::Result<()>,
) -> anyhow::Result<ServeProcess> {
    start_subcommand(binary, "serve", config, log_level, stderr, spawned)
}

/// [`start`] for any subcommand that serves the API and announces its address (`serve`, `run`).
pub(crate) fn start_subcommand(
    binary: &str,
    subcommand: &str,
    config: &Path,
    log_level: &str,
    stderr: Stdio,
    spawned: impl FnOnce(u32) -> anyhow::Result<()>,
) -> anyhow::Result<ServeProcess> {
    let mut command = TiedCommand::new(binary, GRACE);
    command
        .command()
        .args([subcommand, "--config"])
        .arg(config)
        .env("RUST_LOG", log_level)
        .stdout(Stdio::piped())
        .stderr(stderr);
    let mut child = command
        .spawn()
        .map_err(|e| anyhow::anyhow!("cannot run {binary}: {e}"))?;
    let stdout = child.child().stdout.take().expect("stdout is piped");
    let mut process = ServeProcess {
        child,
        base: String::new(),
    };
    spawned(process.child.id())?;
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line)?;
    process.base = line
        .trim()
        .rsplit(' ')
        .next()
        .filter(|url| url.starts_with("http://"))
        .ok_or_else(|| anyhow::anyhow!("agentindex {subcommand} announced no address: {line:?}"))?
        .to_string();
    Ok(process)
}
