//! Running the `agentindex` binary as a user would, for tests that drive the real process.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A running `agentindex`; killed when dropped.
pub(crate) struct Running(Child);

impl Running {
    /// The process id, to read its memory or signal it.
    pub(crate) fn pid(&self) -> u32 {
        self.0.id()
    }

    /// Whether the process is still running.
    pub(crate) fn alive(&mut self) -> bool {
        matches!(self.0.try_wait(), Ok(None))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `agentindex ARGS CONFIG` (a serving subcommand) and returns it with the base URL it
/// announced on its first line.
pub(crate) fn start(args: &[&str], config: &Path) -> (Running, String) {
    start_with_stderr(args, config, Stdio::null())
}

/// Starts `agentindex ARGS CONFIG` (a subcommand that announces nothing, such as `index`).
pub(crate) fn spawn(args: &[&str], config: &Path) -> Running {
    let child = Command::new(env!("CARGO_BIN_EXE_agentindex"))
        .args(args)
        .arg(config)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    Running(child)
}

/// [`start`], with the process's log (its stderr) written to `log`, for tests that read what
/// the operator sees.
pub(crate) fn start_logging_to(args: &[&str], config: &Path, log: &Path) -> (Running, String) {
    start_with_stderr(args, config, std::fs::File::create(log).unwrap().into())
}

/// [`start`] with the process's stderr sent to `stderr`.
fn start_with_stderr(args: &[&str], config: &Path, stderr: Stdio) -> (Running, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentindex"))
        .args(args)
        .arg(config)
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let running = Running(child);
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
