//! `agentindex dev` as a user starts it: the addresses it prints, and stopping it.
//!
//! dev is stopped as a user stops it, with SIGTERM, so it stops its own chain; SIGKILL follows
//! if it is still running after [`GRACE`]. It is tied to the test process
//! ([`agentindex_contracts::tied`]), so that happens even when the test process is killed.

use super::graphql::data;
use agentindex_contracts::tied::{TiedChild, TiedCommand};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Lines};
use std::process::{ChildStdout, ExitStatus, Stdio};
use std::time::{Duration, Instant};

const BY_SKILL: &str = "query($skill: String!) { agents(filter: { skill: $skill }, first: 100) {
    totalCount edges { node { name source x402 skills { id } card { signature } } } } }";

/// How long dev gets from SIGTERM to stop its indexer, API and chain before SIGKILL.
const GRACE: Duration = Duration::from_secs(30);

/// A running `agentindex dev` and what it printed; stopped when dropped.
pub(crate) struct Dev {
    process: TiedChild,
    /// Its working directory (where `data/dev.db` is).
    _dir: tempfile::TempDir,
    /// The rest of its output, after the addresses.
    pub(crate) lines: Lines<BufReader<ChildStdout>>,
    /// The first line's address: the explorer (`http://127.0.0.1:PORT/`).
    pub(crate) explorer: String,
    /// GraphiQL's address.
    pub(crate) graphiql: String,
    /// The local chain's JSON-RPC endpoint.
    pub(crate) chain: String,
    /// The test USDC contract.
    pub(crate) usdc: String,
    /// The ERC-8004 Identity Registry.
    pub(crate) identity: String,
}

impl Dev {
    /// Starts `agentindex dev` on a free port in a new directory and reads its addresses, up to
    /// the GraphiQL line. The explorer's line must come first.
    pub(crate) fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut tied = TiedCommand::new(env!("CARGO_BIN_EXE_agentindex"), GRACE);
        tied.command()
            .args(["dev", "--listen", "127.0.0.1:0"])
            .current_dir(dir.path())
            .env("RUST_LOG", "warn")
            .envs(super::TEST_SERVER_SHARE_ENV)
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut process = tied.spawn().unwrap();
        let stdout = process.child().stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let mut next = || {
            lines
                .next()
                .expect("agentindex dev printed its addresses")
                .unwrap()
        };
        let first = next();
        let explorer = value_of(&first, "Explorer")
            .unwrap_or_else(|| panic!("the explorer's address comes first: {first:?}"));
        let (mut chain, mut usdc, mut identity) = (None, None, None);
        let graphiql = loop {
            let line = next();
            if let Some(url) = value_of(&line, "GraphiQL") {
                break url;
            }
            if let Some(rest) = value_of(&line, "local chain") {
                chain = rest.split_whitespace().next().map(str::to_string);
            }
            if let Some(address) = value_of(&line, "usdc") {
                usdc = Some(address);
            }
            if let Some(address) = value_of(&line, "identity") {
                identity = Some(address);
            }
        };
        Self {
            process,
            _dir: dir,
            lines,
            explorer,
            graphiql,
            chain: chain.expect("agentindex dev printed the local chain"),
            usdc: usdc.expect("agentindex dev printed the USDC contract"),
            identity: identity.expect("agentindex dev printed the identity registry"),
        }
    }

    /// The demo's translators (skill `translate`), once agents from every path are indexed
    /// with their cards read (each then has a signature status); fails after two minutes.
    /// Indexing and document fetching run in the background, and an ERC-8004 agent's card is
    /// reached through its registration file, one fetch later.
    pub(crate) fn translators_once_read(&self) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let found =
                data(&self.graphiql, BY_SKILL, json!({ "skill": "translate" }))["agents"].clone();
            let nodes: Vec<Value> = found["edges"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["node"].clone())
                .collect();
            let paths: BTreeSet<&str> = nodes.iter().filter_map(|n| n["source"].as_str()).collect();
            if paths.len() == 4 && nodes.iter().all(|n| n["card"]["signature"].is_string()) {
                return nodes;
            }
            assert!(
                Instant::now() < deadline,
                "demo translators not indexed in time: {found}"
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// The process id of `agentindex dev`.
    pub(crate) fn pid(&self) -> u32 {
        self.process.id()
    }

    /// SIGKILL, as an OOM killer or a CI timeout would stop it: no destructor runs.
    pub(crate) fn kill(&mut self) {
        self.process.child().kill().unwrap();
        self.process.child().wait().unwrap();
    }

    /// SIGTERM, then the exit status once it stopped (SIGKILL after [`GRACE`]).
    pub(crate) fn terminate(mut self) -> ExitStatus {
        self.process.stop().unwrap()
    }
}

/// What a `label   value` line of `agentindex dev` says after `label`.
fn value_of(line: &str, label: &str) -> Option<String> {
    line.strip_prefix(label)
        .filter(|rest| rest.starts_with(' '))
        .map(|rest| rest.trim().to_string())
}
