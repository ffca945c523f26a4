//! Where the chain tools live.
//!
//! The README's commands install anvil, forge and cast from npm into `tools/node_modules`; an
//! environment variable (`AGENTINDEX_ANVIL`, `AGENTINDEX_FORGE`, `AGENTINDEX_CAST`) points
//! elsewhere, and a binary on `PATH` is the last resort.

use std::path::{Path, PathBuf};

/// One of the Foundry binaries the project pins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// The local chain.
    Anvil,
    /// The Solidity build and test runner.
    Forge,
    /// The command-line RPC client.
    Cast,
}

impl Tool {
    fn name(self) -> &'static str {
        match self {
            Tool::Anvil => "anvil",
            Tool::Forge => "forge",
            Tool::Cast => "cast",
        }
    }

    fn env_var(self) -> &'static str {
        match self {
            Tool::Anvil => "AGENTINDEX_ANVIL",
            Tool::Forge => "AGENTINDEX_FORGE",
            Tool::Cast => "AGENTINDEX_CAST",
        }
    }

    /// The binary to run: the environment override, else the npm-installed copy, else `PATH`.
    pub fn path(self) -> PathBuf {
        if let Some(explicit) = std::env::var_os(self.env_var()) {
            return PathBuf::from(explicit);
        }
        let installed = repo_root()
            .join("tools/node_modules/@foundry-rs")
            .join(format!("{}-linux-amd64", self.name()))
            .join("bin")
            .join(self.name());
        if installed.is_file() {
            installed
        } else {
            PathBuf::from(self.name())
        }
    }
}

/// The repository checkout this crate was built from.
pub fn repo_root() -> &'static Path {
    // contracts/bindings -> repository root
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The Foundry project (`contracts/`).
pub fn contracts_dir() -> PathBuf {
    repo_root().join("contracts")
}
