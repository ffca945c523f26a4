//! Running the `agentindex` binary as a user would, for tests that drive the real process.
//!
//! Each process is tied to the test process ([`agentindex_contracts::tied`]): it is killed when
//! dropped, and stopped even when the test process is killed before it can drop anything.

use agentindex_contracts::tied::{TiedChild, TiedCommand};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// How long a process gets between SIGTERM and SIGKILL when the test process dies first.
const GRACE: Duration = Duration::from_secs(10);

/// `agentindex ARGS CONFIG`, tied to the test process.
pub(crate) fn command(args: &[&str], config: &Path) -> TiedCommand {
    let mut tied = TiedCommand::new(env!("CARGO_BIN_EXE_agentindex"), GRACE);
    tied.command()
        .args(args)
        .arg(config)
        .envs(super::TEST_SERVER_SHARE_ENV);
    tied
}

/// A running `agentindex`; killed when dropped.
pub(crate) struct Running(TiedChild);

impl Running {
    /// The process id, to read its memory or signal it.
    pub(crate) fn pid(&self) -> u32 {
        self.0.id()
    }

    /// Whether the process is still running.
    pub(crate) fn alive(&mut self) -> bool {
        matches!(self.0.child().try_wait(), Ok(None))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // SIGKILL: these subcommands start no process of their own, so there is nothing a
        // graceful stop would clean up, and the tests need not wait for the API to drain.
        let _ = self.0.child().kill();
        // The tie's own drop then reaps it.
    }
}

/// Starts `agentindex ARGS CONFIG` (a serving subcommand) and returns it with the base URL it
/// announced on its first line.
pub(crate) fn start(args: &[&str], config: &Path) -> (Running, String) {
    start_with_stderr(args, config, Stdio::null())
}

/// `agentindex serve` over `indexed`'s database on a free port: the process, its base URL and
/// the config file it was given (which `agentindex mcp` can be given too).
pub(crate) fn serve_indexed(
    devnet: &agentindex_contracts::Devnet,
    indexed: &super::Indexed,
) -> (Running, String, std::path::PathBuf) {
    let toml = super::config_toml(devnet, &[devnet.endpoint()], &indexed.db, 0, "")
        + "\n[api]\nlisten = \"127.0.0.1:0\"\n";
    let config = indexed.dir.path().join("serve.toml");
    std::fs::write(&config, toml).unwrap();
    let (running, base) = start(&["serve", "--config"], &config);
    (running, base, config)
}

/// Starts `agentindex ARGS CONFIG` (a subcommand that announces nothing, such as `index`).
pub(crate) fn spawn(args: &[&str], config: &Path) -> Running {
    let mut tied = command(args, config);
    tied.command().stdout(Stdio::null()).stderr(Stdio::null());
    Running(tied.spawn().unwrap())
}

/// [`start`], with the process's log (its stderr) written to `log`, for tests that read what
/// the operator sees.
pub(crate) fn start_logging_to(args: &[&str], config: &Path, log: &Path) -> (Running, String) {
    start_with_stderr(args, config, std::fs::File::create(log).unwrap().into())
}

/// [`start`] with the process's stderr sent to `stderr`.
fn start_with_stderr(args: &[&str], config: &Path, stderr: Stdio) -> (Running, String) {
    let mut tied = command(args, config);
    tied.command().stdout(Stdio::piped()).stderr(stderr);
    let mut running = Running(tied.spawn().unwrap());
    let stdout = running.0.child().stdout.take().unwrap();
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let url = line
        .trim()
        .rsplit(' ')
        .next()
        .filter(|u| u.starts_with("http://"))
        .unwrap_or_else(|| panic!("agentindex announced no address: {line:?}"))
        .to_string();
    (running, url)
}
