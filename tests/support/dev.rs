//! `agentindex dev` as a user starts it: the addresses it prints, and stopping it.

use super::graphql::data;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Lines};
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

const BY_SKILL: &str = "query($skill: String!) { agents(filter: { skill: $skill }, first: 100) {
    totalCount edges { node { name source x402 skills { id } card { signature } } } } }";

/// A running `agentindex dev` and what it printed; killed when dropped.
pub(crate) struct Dev {
    child: Child,
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
        let mut child = Command::new(env!("CARGO_BIN_EXE_agentindex"))
            .args(["dev", "--listen", "127.0.0.1:0"])
            .current_dir(dir.path())
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
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
            child,
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
            if paths.len() == 3 && nodes.iter().all(|n| n["card"]["signature"].is_string()) {
                return nodes;
            }
            assert!(
                Instant::now() < deadline,
                "demo translators not indexed in time: {found}"
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// SIGTERM, then the exit status once it stopped (within 30 s).
    pub(crate) fn terminate(mut self) -> ExitStatus {
        let terminated = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(terminated.success());
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "still running after SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Dev {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a `label   value` line of `agentindex dev` says after `label`.
fn value_of(line: &str, label: &str) -> Option<String> {
    line.strip_prefix(label)
        .filter(|rest| rest.starts_with(' '))
        .map(|rest| rest.trim().to_string())
}
