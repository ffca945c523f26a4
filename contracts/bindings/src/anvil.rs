//! The anvil process under a [`crate::Devnet`].
//!
//! anvil runs tied to this process ([`crate::tied`]): it stops when the `Devnet` is dropped,
//! when a start fails half-way, and when this process dies without running a destructor. That is
//! why the devnet does not use alloy's `Anvil` builder, whose instance stops anvil only in `Drop`
//! (and leaves it running when reading its banner fails). The port and the funded accounts' keys
//! are read from the banner anvil prints before it listens.

use crate::options::DevnetOptions;
use crate::tied::{TiedChild, TiedCommand};
use alloy::signers::local::PrivateKeySigner;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};

/// How long anvil may take to print its banner and listen; a loaded CI machine running many
/// tests at once is slower than a laptop, and anvil's own start takes a fraction of a second.
const STARTUP: Duration = Duration::from_secs(30);

/// How long anvil gets between SIGTERM and SIGKILL when it is stopped. What it keeps on disk
/// is in a folder of ours ([`AnvilProcess::past_states`]), so there is nothing to wait for
/// beyond its own exit.
const GRACE: Duration = Duration::from_secs(5);

/// Why anvil did not start.
#[derive(Debug, thiserror::Error)]
pub enum AnvilError {
    /// The keeper shell could not be started.
    #[error("spawning: {0}")]
    Spawn(#[source] std::io::Error),
    /// The folder for anvil's past states could not be made.
    #[error("making a folder for its past states: {0}")]
    StatesFolder(#[source] std::io::Error),
    /// Reading anvil's output failed.
    #[error("reading its output: {0}")]
    Read(#[source] std::io::Error),
    /// Waiting for anvil to exit failed.
    #[error("waiting for it to exit: {0}")]
    Wait(#[source] std::io::Error),
    /// anvil exited before it listened (127: the binary was not found).
    #[error("it exited before listening ({status}); see its output above")]
    Exited {
        /// How it exited.
        status: String,
    },
    /// anvil printed no `Listening on` line in time.
    #[error("it did not listen within {0:?}")]
    Timeout(Duration),
    /// A line of the private-key list is not a key.
    #[error("unreadable private key line {line:?}")]
    Key {
        /// The line.
        line: String,
    },
}

/// A running anvil, stopped when dropped.
pub(crate) struct AnvilProcess {
    /// Declared first, so anvil stops before the rest is dropped.
    _process: TiedChild,
    /// Where anvil writes the states of past blocks once more than it keeps in memory have
    /// piled up: a JSON file of the whole state per block, a gigabyte for a long test chain.
    /// Left to itself anvil puts them under `~/.foundry/anvil/tmp` and never removes them
    /// (not on SIGTERM either), which filled a CI machine's disk; this folder goes with it.
    past_states: tempfile::TempDir,
    /// The HTTP port on 127.0.0.1.
    pub(crate) port: u16,
    /// The funded accounts' keys, in anvil's order.
    pub(crate) keys: Vec<PrivateKeySigner>,
}

impl AnvilProcess {
    /// Where anvil writes the states of past blocks.
    pub(crate) fn past_states_folder(&self) -> &Path {
        self.past_states.path()
    }
}

/// Starts the anvil at `path` as `options` say, on a free loopback port.
pub(crate) async fn start(
    path: &Path,
    options: &DevnetOptions,
) -> Result<AnvilProcess, AnvilError> {
    let states = tempfile::Builder::new()
        .prefix("agentindex-anvil-states-")
        .tempdir()
        .map_err(AnvilError::StatesFolder)?;
    let mut tied = TiedCommand::new(path, GRACE);
    let command = tied.command();
    command
        .args(["--host", "127.0.0.1", "--port", "0"])
        .arg("--cache-path")
        .arg(states.path())
        .args(["--chain-id", &options.chain_id.to_string()])
        .args(["--accounts", &options.accounts.to_string()])
        .env("FOUNDRY_DISABLE_NIGHTLY_WARNING", "")
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if let Some(seconds) = options.block_time {
        command.args(["--block-time", &seconds.to_string()]);
    }
    if let Some(limit) = options.gas_limit {
        command.args(["--gas-limit", &limit.to_string()]);
    }
    if let Some(states) = options.prune_history {
        command.args(["--prune-history", &states.to_string()]);
    }
    if let Some(timestamp) = options.genesis_timestamp {
        command.args(["--timestamp", &timestamp.to_string()]);
    }
    // From here every early return drops `process`, which stops anvil.
    let mut process = tied.spawn().map_err(AnvilError::Spawn)?;
    let stdout = process.child().stdout.take().expect("stdout is piped");
    let stdout = tokio::process::ChildStdout::from_std(stdout).map_err(AnvilError::Read)?;
    let mut lines = BufReader::new(stdout).lines();
    let mut banner = Banner::default();
    let port = tokio::time::timeout(STARTUP, async {
        while let Some(line) = lines.next_line().await.map_err(AnvilError::Read)? {
            if let Some(port) = banner.read(&line)? {
                return Ok(Some(port));
            }
        }
        Ok(None)
    })
    .await
    .map_err(|_| AnvilError::Timeout(STARTUP))??;
    let Some(port) = port else {
        let status = process.stop().map_err(AnvilError::Wait)?;
        return Err(AnvilError::Exited {
            status: status.to_string(),
        });
    };
    tracing::debug!(target: "agentindex::devnet", pid = process.id(), port, "anvil listening");
    // Its later output is not read; dropping the pipe's read end is what alloy's builder does.
    Ok(AnvilProcess {
        _process: process,
        past_states: states,
        port,
        keys: banner.keys,
    })
}

/// What anvil's banner has said so far.
#[derive(Default)]
struct Banner {
    in_keys: bool,
    keys: Vec<PrivateKeySigner>,
}

impl Banner {
    /// Takes the next line; the port once anvil says it listens.
    fn read(&mut self, line: &str) -> Result<Option<u16>, AnvilError> {
        if let Some(address) = line.strip_prefix("Listening on ") {
            // `Listening on 127.0.0.1:PORT`
            let port = address
                .trim()
                .rsplit(':')
                .next()
                .and_then(|p| p.parse().ok());
            return Ok(port);
        }
        let line = line.trim();
        if line == "Private Keys" {
            self.in_keys = true;
        } else if self.in_keys && line.starts_with('(') {
            // `(0) 0xac09…`
            let key = line
                .split_whitespace()
                .nth(1)
                .and_then(|hex| hex.parse::<PrivateKeySigner>().ok())
                .ok_or_else(|| AnvilError::Key {
                    line: line.to_string(),
                })?;
            self.keys.push(key);
        } else if !line.is_empty() && !line.starts_with('=') {
            self.in_keys = false;
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BANNER: &str = "
Available Accounts
==================

(0) 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266 (10000.000000000000000000 ETH)
(1) 0x70997970C51812dc3A010C7d01b50e0d17dc79C8 (10000.000000000000000000 ETH)

Private Keys
==================

(0) 0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80
(1) 0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d

Wallet
==================
Mnemonic:          test test test test test test test test test test test junk
Derivation path:   m/44'/60'/0'/0/

Chain ID
==================

31337

Listening on 127.0.0.1:40207
";

    #[test]
    fn the_banner_gives_the_port_and_the_keys_of_the_listed_accounts() {
        let mut banner = Banner::default();
        let port = BANNER
            .lines()
            .find_map(|line| banner.read(line).unwrap())
            .unwrap();
        assert_eq!(port, 40207);
        let addresses: Vec<String> = banner
            .keys
            .iter()
            .map(|k| k.address().to_string())
            .collect();
        assert_eq!(
            addresses,
            [
                "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
                "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
            ]
        );
    }

    /// A stand-in for anvil running `script`, written by another process: executing a file
    /// this process still held open for writing (a thread forking meanwhile) fails with ETXTBSY.
    fn fake_anvil(dir: &Path, script: &str) -> std::path::PathBuf {
        let path = dir.join("anvil");
        let written = std::process::Command::new("sh")
            .args([
                "-c",
                "printf '#!/bin/sh\\n%s\\n' \"$1\" >\"$2\" && chmod +x \"$2\"",
            ])
            .args(["fake", script])
            .arg(&path)
            .status()
            .unwrap();
        assert!(written.success());
        path
    }

    #[tokio::test]
    async fn a_start_that_fails_after_anvil_started_stops_it() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let script = format!(
            "echo $$ >'{}'; echo 'Private Keys'; echo '(0) 0xnothex'; exec sleep 30",
            pid_file.display()
        );
        let anvil = fake_anvil(dir.path(), &script);
        let error = start(&anvil, &DevnetOptions::default())
            .await
            .err()
            .unwrap();
        assert!(matches!(error, AnvilError::Key { .. }), "{error}");
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        assert!(
            !Path::new(&format!("/proc/{}", pid.trim())).exists(),
            "the fake anvil (pid {pid}) was stopped and reaped"
        );
    }

    #[tokio::test]
    async fn an_anvil_that_exits_before_listening_is_an_error_with_its_status() {
        let dir = tempfile::tempdir().unwrap();
        let anvil = fake_anvil(dir.path(), "echo starting; exit 3");
        let error = start(&anvil, &DevnetOptions::default())
            .await
            .err()
            .unwrap();
        assert!(error.to_string().contains("exit status: 3"), "{error}");
    }

    #[test]
    fn a_garbled_key_is_an_error_naming_the_line() {
        let mut banner = Banner::default();
        banner.read("Private Keys").unwrap();
        let error = banner.read("(0) 0xnothex").unwrap_err();
        assert!(error.to_string().contains("(0) 0xnothex"), "{error}");
    }
}
