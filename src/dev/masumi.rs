//! The Masumi part of `agentindex dev`: Cardano beside the local EVM chain. No Cardano node
//! runs here: the Blockfrost emulator of the project's tools (`tools/cardano/`, a chain built
//! with pycardano, served in Blockfrost's API) stands in for the network, and a few Masumi
//! agents are registered on it: one in the registry's first metadata shape with its pricing,
//! two in the A2A shape whose cards this dev server serves (one updated once), one registered
//! and deregistered; purchases from them are released, refunded and disputed through the
//! payment contract. Skipped, saying why, when the tools are not installed.

use super::catalog::{self, DemoAgent};
use agentindex_contracts::tools::repo_root;
use anyhow::Context;
use serde_json::{Value, json};
use std::process::Stdio;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};

/// The emulator's project key (it refuses requests without it, as Blockfrost does).
const PROJECT_ID: &str = "preprodagentindexdev";

/// A running emulator with the demo's Masumi agents; it stops with `agentindex dev` (killed
/// when dropped, and it exits by itself when its stdin closes, should dev be killed).
pub(crate) struct MasumiDemo {
    _child: Child,
    _stdin: ChildStdin,
    /// The `[[cardano]]` entry that follows it.
    pub(crate) toml: String,
    /// Its Blockfrost base URL.
    pub(crate) base: String,
    /// Masumi agents registered.
    pub(crate) agents: usize,
}

/// Demo agents whose cards the document server serves for the Masumi agents: two after the EVM
/// catalogue, the first of them a translator (so a search by skill finds agents of every
/// source).
pub(crate) fn card_agents() -> Vec<DemoAgent> {
    let translates = |a: &DemoAgent| a.skills.iter().any(|s| s.id == "translate");
    let first = (catalog::AGENTS..)
        .map(catalog::agent)
        .find(translates)
        .expect("the themes repeat, translation among them");
    let second = catalog::agent(first.n + 1);
    vec![first, second]
}

/// Starts the emulator and registers the demo's Masumi agents, their cards at `card_url(n)`;
/// `None` (and a line on stderr) when the tools are not installed.
pub(crate) async fn start(
    cards: &[DemoAgent],
    card_url: impl Fn(usize) -> String,
) -> anyhow::Result<Option<MasumiDemo>> {
    // Found in the checkout the binary was built from, as the local chain's anvil is.
    let tools = repo_root().join("tools");
    let python = tools.join(".venv/bin/python");
    let emulator = tools.join("cardano/blockfrost_emulator.py");
    if !python.exists() || !emulator.exists() {
        eprintln!(
            "Masumi on Cardano left out: tools/.venv is not installed (scripts/install-tools, or scripts/demo, installs it)"
        );
        return Ok(None);
    }
    let mut child = Command::new(&python)
        .arg(&emulator)
        .args(["--network", "preprod", "--project-id", PROJECT_ID])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .context("starting the Blockfrost emulator")?;
    let stdin = child.stdin.take().context("the emulator's stdin")?;
    let mut lines = BufReader::new(child.stdout.take().context("the emulator's stdout")?).lines();
    let port = lines
        .next_line()
        .await?
        .context("the emulator ended before saying its port")?;
    let base = format!("http://127.0.0.1:{}", port.trim());
    let control = Control {
        base: base.clone(),
        client: reqwest_client(),
    };
    let agents = register(&control, cards, card_url).await?;
    let info = control.get("info").await?;
    let text = |v: &Value| v.as_str().map(str::to_string).context("emulator info");
    let toml = format!(
        "[[cardano]]\nnetwork = \"preprod\"\nblockfrost_url = \"{base}\"\nproject_id = \"{PROJECT_ID}\"\nrequests_per_second = 200\nburst = 200\npoll_interval_ms = 500\n[cardano.masumi]\nregistry_v1 = \"{}\"\nregistry_v2 = \"{}\"\nescrow_v1 = \"{}\"\nescrow_v2 = \"{}\"\n",
        text(&info["policy_ids"]["v1"])?,
        text(&info["policy_ids"]["v2"])?,
        text(&info["escrow"]["v1"]["address"])?,
        text(&info["escrow"]["v2"]["address"])?,
    );
    Ok(Some(MasumiDemo {
        _child: child,
        _stdin: stdin,
        toml,
        base,
        agents,
    }))
}

/// Registers the agents and their purchases; returns how many agents are registered.
async fn register(
    control: &Control,
    cards: &[DemoAgent],
    card_url: impl Fn(usize) -> String,
) -> anyhow::Result<usize> {
    let summariser = control
        .post("registry/register", json!({"contract": "v1", "metadata": {
            "name": "Masumi Summariser",
            "description": "Summarises long documents into a page; registered in Masumi's registry on Cardano with the registry's first metadata shape.",
            "api_base_url": "https://summariser.masumi.example/api",
            "author": {"name": "agentindex demo", "contact_email": "demo@agentindex.example"},
            "capability": {"name": "summary-model", "version": "1.0"},
            "tags": ["summaries", "text"],
            "agentPricing": {"pricingType": "Fixed", "fixedPricing": [{"amount": "5000000", "unit": ""}]},
            "metadata_version": "1"
        }}))
        .await?;
    let mut units = vec![unit(&summariser)?];
    for agent in cards {
        let answer = control
            .post("registry/register", json!({"contract": "v2", "metadata": {
                "name": agent.name,
                "description": agent.description,
                "api_url": format!("https://masumi.example/agents/{}", agent.n),
                "agent_card_url": card_url(agent.n),
                "a2a_protocol_versions": ["1.0"],
                "tags": agent.skills.iter().flat_map(|s| s.tags.iter().copied()).collect::<Vec<_>>(),
                "metadata_version": "2"
            }}))
            .await?;
        units.push(unit(&answer)?);
    }
    // The first card agent is updated once (V2 mints its next version).
    let first = &cards[0];
    let updated = control
        .post(
            "registry/update",
            json!({"unit": units[1], "metadata": {
                "name": first.name,
                "description": format!("{} (updated on Cardano)", first.description),
                "api_url": format!("https://masumi.example/agents/{}", first.n),
                "agent_card_url": card_url(first.n),
                "a2a_protocol_versions": ["1.0"],
                "metadata_version": "2"
            }}),
        )
        .await?;
    units[1] = unit(&updated)?;
    let gone = control
        .post("registry/register", json!({"contract": "v1", "metadata": {"name": "Masumi Retired", "description": "Registered, then deregistered."}}))
        .await?;
    control
        .post("registry/deregister", json!({"unit": unit(&gone)?}))
        .await?;
    // Purchases: released ones make reputation, the others are shown with their outcome.
    for (n, (agent, outcome, buyer)) in [
        (0, "released", "buyer-0"),
        (0, "released", "buyer-1"),
        (1, "released", "buyer-2"),
        (1, "refunded", "buyer-0"),
        (2, "disputed", "buyer-1"),
        (2, "released", "buyer-0"),
    ]
    .into_iter()
    .enumerate()
    {
        let lovelace = (3 + n) * 1_000_000;
        let locked = control
            .post(
                "escrow/lock",
                json!({
                    "agent_unit": units[agent],
                    "contract": if agent == 0 { "v1" } else { "v2" },
                    "buyer": buyer,
                    "amount": [{"unit": "lovelace", "quantity": lovelace.to_string()}]
                }),
            )
            .await?;
        control
            .post(
                "escrow/settle",
                json!({"escrow_id": locked["escrow_id"], "outcome": outcome}),
            )
            .await?;
    }
    Ok(units.len() + 1)
}

fn unit(answer: &Value) -> anyhow::Result<String> {
    answer["unit"]
        .as_str()
        .map(str::to_string)
        .with_context(|| format!("the emulator answered {answer}"))
}

fn reqwest_client() -> reqwest::Client {
    reqwest::Client::new()
}

/// The emulator's control API.
struct Control {
    base: String,
    client: reqwest::Client,
}

impl Control {
    async fn post(&self, path: &str, body: Value) -> anyhow::Result<Value> {
        let response = self
            .client
            .post(format!("{}/_emulator/{path}", self.base))
            .json(&body)
            .send()
            .await?;
        let status = response.status();
        let answer: Value = response.json().await.unwrap_or(Value::Null);
        anyhow::ensure!(status.is_success(), "emulator {path}: {status} {answer}");
        Ok(answer)
    }

    async fn get(&self, path: &str) -> anyhow::Result<Value> {
        Ok(self
            .client
            .get(format!("{}/_emulator/{path}", self.base))
            .send()
            .await?
            .json()
            .await?)
    }
}
