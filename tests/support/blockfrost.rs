//! The Blockfrost-compatible emulator (`tools/cardano/blockfrost_emulator.py`): no Cardano node
//! runs here, so the Masumi tests read a chain built with pycardano (real policy ids, asset
//! names, CBOR metadata and transaction hashes) served in Blockfrost's API, every answer checked
//! against the official OpenAPI schema (`--validate`). The emulator exits when its stdin closes,
//! so a test that ends or dies leaves no server behind.

use super::tool::json_through;
use agentindex_indexer::config::Config;
use agentindex_indexer::store::Store;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};

/// The project key the emulator demands.
pub(crate) const PROJECT_ID: &str = "preprodagentindextest";

fn tools() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tools")
}

/// A running emulator.
pub(crate) struct Emulator {
    _child: Child,
    _stdin: ChildStdin,
    /// Its Blockfrost base URL.
    pub(crate) base: String,
    client: reqwest::Client,
}

impl Emulator {
    /// Starts an emulator of preprod that validates every answer, with `args` besides.
    pub(crate) async fn start(args: &[&str]) -> Self {
        let mut command = Command::new(tools().join(".venv/bin/python"));
        command
            .arg(tools().join("cardano/blockfrost_emulator.py"))
            .args([
                "--network",
                "preprod",
                "--project-id",
                PROJECT_ID,
                "--validate",
            ])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        let mut child = command
            .spawn()
            .expect("starting the Blockfrost emulator (run scripts/install-tools)");
        let stdin = child.stdin.take().expect("stdin is piped");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout is piped")).lines();
        let port = lines
            .next_line()
            .await
            .expect("reading the emulator's port")
            .expect("the emulator prints its port");
        Self {
            _child: child,
            _stdin: stdin,
            base: format!("http://127.0.0.1:{}", port.trim()),
            client: reqwest::Client::new(),
        }
    }

    /// POSTs `body` to the control API's `path` (under `/_emulator/`), failing on an error.
    pub(crate) async fn control(&self, path: &str, body: Value) -> Value {
        let response = self
            .client
            .post(format!("{}/_emulator/{path}", self.base))
            .json(&body)
            .send()
            .await
            .unwrap_or_else(|e| panic!("control {path}: {e}"));
        let status = response.status();
        let answer: Value = response.json().await.unwrap_or(Value::Null);
        assert!(
            status.is_success(),
            "control {path} {body}: {status} {answer}"
        );
        answer
    }

    /// What is deployed: policy ids, escrow addresses, wallets, the tip.
    pub(crate) async fn info(&self) -> Value {
        self.get("info").await
    }

    /// Requests served, errors injected, validation failures.
    pub(crate) async fn stats(&self) -> Value {
        self.get("stats").await
    }

    async fn get(&self, path: &str) -> Value {
        self.client
            .get(format!("{}/_emulator/{path}", self.base))
            .send()
            .await
            .unwrap_or_else(|e| panic!("control {path}: {e}"))
            .json()
            .await
            .unwrap_or_else(|e| panic!("control {path}: {e}"))
    }

    /// Registers an agent with `metadata` under registry `contract` (`v1` or `v2`); its unit.
    pub(crate) async fn register(&self, contract: &str, metadata: Value) -> String {
        let answer = self
            .control(
                "registry/register",
                json!({"contract": contract, "metadata": metadata}),
            )
            .await;
        answer["unit"].as_str().expect("a unit").to_string()
    }

    /// A `[[cardano]]` entry reading this emulator's registry and payment contracts (as it
    /// deployed them),
    /// with `extra` keys.
    pub(crate) async fn cardano_toml(&self, extra: &str) -> String {
        let info = self.info().await;
        let policy = |version: &str| {
            info["policy_ids"][version]
                .as_str()
                .unwrap_or_else(|| panic!("no {version} policy in {info}"))
                .to_string()
        };
        let escrow = |version: &str| {
            info["escrow"][version]["address"]
                .as_str()
                .unwrap_or_else(|| panic!("no {version} escrow in {info}"))
                .to_string()
        };
        // A fast budget and poll unless `extra` sets its own.
        let defaults: String = [
            ("requests_per_second", "2000"),
            ("burst", "2000"),
            ("poll_interval_ms", "100"),
        ]
        .iter()
        .filter(|(key, _)| !extra.contains(&format!("{key} =")))
        .map(|(key, value)| format!("{key} = {value}\n"))
        .collect();
        format!(
            "[[cardano]]\nnetwork = \"preprod\"\nblockfrost_url = \"{base}\"\nproject_id = \"{PROJECT_ID}\"\n{defaults}{extra}\n[cardano.masumi]\nregistry_v1 = \"{v1}\"\nregistry_v2 = \"{v2}\"\nescrow_v1 = \"{e1}\"\nescrow_v2 = \"{e2}\"\n",
            base = self.base,
            v1 = policy("v1"),
            v2 = policy("v2"),
            e1 = escrow("v1"),
            e2 = escrow("v2"),
        )
    }

    /// The config indexing this emulator's registry and payments into `db` (with `extra`
    /// keys in `[[cardano]]`), documents fetched from loopback.
    pub(crate) async fn config(&self, db: &Path, extra: &str) -> Config {
        let text = format!(
            "[database]\nurl = \"{}\"\n[documents]\nallow_private_addresses = true\nallow_http = true\n{}",
            super::database_url(db),
            self.cardano_toml(extra).await
        );
        Config::from_toml_and_env(&text, Path::new("masumi.toml"), Vec::new())
            .expect("the test config parses")
    }

    /// Panics unless every Blockfrost answer so far validated against the official schema.
    pub(crate) async fn assert_valid_answers(&self) {
        let stats = self.stats().await;
        let failures = &stats["validation_failures"];
        assert!(
            failures.as_array().is_some_and(Vec::is_empty),
            "answers that break Blockfrost's OpenAPI schema: {failures}"
        );
        assert!(
            stats["validated"].as_u64().unwrap_or(0) > 0,
            "nothing was validated: {stats}"
        );
    }

    /// What the official JS client (`@blockfrost/blockfrost-js`) reads of `query` through
    /// `tools/cardano/read-blockfrost.mjs`.
    pub(crate) fn read_with_blockfrost_js(&self, query: Value) -> Value {
        let mut input = query;
        input["base"] = json!(self.base);
        input["project_id"] = json!(PROJECT_ID);
        let mut command = std::process::Command::new("node");
        command.arg(tools().join("cardano/read-blockfrost.mjs"));
        json_through(command, &input, "blockfrost-js")
    }
}

/// How many Masumi agents `store` holds.
pub(crate) async fn masumi_agents(store: &Store) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM agents WHERE source = 'masumi'")
        .fetch_one(store.reader())
        .await
        .unwrap()
}
