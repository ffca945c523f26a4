//! The committed contract artifacts and how they are made.
//!
//! `contracts/artifacts/<Name>.json` holds the ABI, creation bytecode and runtime bytecode of
//! each contract, trimmed from forge's output so the files are small and stable. The bindings
//! compile from them. [`refresh`] rebuilds with forge and either compares (`Mode::Check`, what the
//! test does) or rewrites them (`Mode::Write`, with `AGENTINDEX_BLESS_ARTIFACTS=1`).

use crate::tools::{Tool, contracts_dir};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Command;

/// Every contract the Rust side binds, by contract name (each lives in `<Name>.sol`).
pub const CONTRACTS: [&str; 13] = [
    "AgentCard",
    "AgentFactory",
    "AgentRegistry",
    "IdentityRegistry",
    "ReputationRegistry",
    "ValidationRegistry",
    "TestUSDC",
    "Seeder",
    "SeederClient",
    "LegacyEmitter",
    "ForeignAgent",
    "X402Permit2Proxy",
    "X402BatchSettlement",
];

/// Why the artifacts could not be rebuilt or compared.
#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    /// forge could not be started.
    #[error("running {forge}: {source}")]
    Spawn {
        /// The forge binary tried.
        forge: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// forge ran and failed.
    #[error("forge build failed:\n{stderr}")]
    Build {
        /// What forge printed.
        stderr: String,
    },
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// forge's output was not the JSON shape expected.
    #[error("{path}: {reason}")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        reason: String,
    },
    /// forge's output lacks what the bindings need.
    #[error("{path}: {source}")]
    Trim {
        /// The file.
        path: PathBuf,
        /// What was missing.
        source: TrimError,
    },
    /// Committed artifacts differ from a fresh build.
    #[error(
        "committed artifacts are stale for {0:?}; rerun with AGENTINDEX_BLESS_ARTIFACTS=1 and commit contracts/artifacts"
    )]
    Stale(Vec<&'static str>),
}

/// Why one forge artifact could not be trimmed to the committed form.
#[derive(Debug, thiserror::Error)]
pub enum TrimError {
    /// A part the bindings need is absent.
    #[error("missing {pointer}")]
    Missing {
        /// The JSON pointer of the part (`/bytecode/object`).
        pointer: &'static str,
    },
    /// The trimmed artifact could not be rendered as JSON.
    #[error(transparent)]
    Render(#[from] serde_json::Error),
}

/// Whether [`refresh`] compares or rewrites.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Fail with [`ArtifactError::Stale`] when a committed file differs.
    Check,
    /// Overwrite the committed files.
    Write,
}

/// The committed artifact of `name`.
pub fn committed_path(name: &str) -> PathBuf {
    contracts_dir()
        .join("artifacts")
        .join(format!("{name}.json"))
}

/// Keeps what the bindings need from one forge artifact, rendered as the committed file's text.
pub fn trim(forge_artifact: &Value) -> Result<String, TrimError> {
    let field = |pointer: &'static str| {
        forge_artifact
            .pointer(pointer)
            .cloned()
            .ok_or(TrimError::Missing { pointer })
    };
    let trimmed = json!({
        "abi": field("/abi")?,
        "bytecode": { "object": field("/bytecode/object")? },
        "deployedBytecode": { "object": field("/deployedBytecode/object")? },
    });
    let mut text = serde_json::to_string_pretty(&trimmed)?;
    text.push('\n');
    Ok(text)
}

/// Runs `forge build` and checks or rewrites every committed artifact.
pub fn refresh(mode: Mode) -> Result<(), ArtifactError> {
    let forge = Tool::Forge.path();
    let output = Command::new(&forge)
        .arg("build")
        .current_dir(contracts_dir())
        .output()
        .map_err(|source| ArtifactError::Spawn {
            forge: forge.clone(),
            source,
        })?;
    if !output.status.success() {
        return Err(ArtifactError::Build {
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        });
    }
    let mut stale = Vec::new();
    for name in CONTRACTS {
        let built = contracts_dir()
            .join("out")
            .join(format!("{name}.sol"))
            .join(format!("{name}.json"));
        let raw = read(&built)?;
        let value: Value = serde_json::from_str(&raw).map_err(|e| ArtifactError::Malformed {
            path: built.clone(),
            reason: e.to_string(),
        })?;
        let fresh = trim(&value).map_err(|source| ArtifactError::Trim {
            path: built.clone(),
            source,
        })?;
        let committed = committed_path(name);
        match mode {
            Mode::Write => {
                std::fs::write(&committed, fresh).map_err(|source| ArtifactError::Io {
                    path: committed,
                    source,
                })?
            }
            Mode::Check => {
                if read(&committed).ok().as_deref() != Some(fresh.as_str()) {
                    stale.push(name);
                }
            }
        }
    }
    if stale.is_empty() {
        Ok(())
    } else {
        Err(ArtifactError::Stale(stale))
    }
}

fn read(path: &PathBuf) -> Result<String, ArtifactError> {
    std::fs::read_to_string(path).map_err(|source| ArtifactError::Io {
        path: path.clone(),
        source,
    })
}
