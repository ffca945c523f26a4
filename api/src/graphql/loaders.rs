//! DataLoaders: every relation an agent list needs is read once per request for all agents on
//! the page, never once per agent.

use crate::read::activity::{self, FeedbackRow, HistoryRow, ValidationRow, Window};
use crate::read::agent_rows::{self, Cells};
use crate::read::counts::{self, Relation};
use crate::read::documents::{self, DocumentRow};
use crate::read::evaluations;
use crate::read::liveness;
use crate::read::masumi_payments::{self, EscrowRow};
use crate::read::skills::{self, SkillRow};
use crate::state::ApiState;
use agentindex_indexer::primitives::{AgentKey, AgentKeyError};
use agentindex_indexer::reputation::{Evaluation, Exclusion, Payment};
use agentindex_indexer::schema::{Table, agent_reputation, agents};
use agentindex_indexer::store::StoreRead;
use agentindex_indexer::store::{PageWindow, StoreError};
use async_graphql::dataloader::Loader;
use futures_util::future::BoxFuture;
use sqlx::AnyPool;
use std::collections::BTreeMap;
use std::collections::HashMap;
use std::sync::Arc;

/// Skills by agent key.
pub(crate) struct SkillLoader(pub(crate) AnyPool);

impl Loader<String> for SkillLoader {
    type Value = Vec<SkillRow>;
    type Error = Arc<sqlx::Error>;

    async fn load(&self, keys: &[String]) -> Result<HashMap<String, Self::Value>, Self::Error> {
        skills::of_agents(&self.0, keys).await.map_err(Arc::new)
    }
}

/// Documents (with lints) by agent key.
pub(crate) struct DocumentLoader(pub(crate) AnyPool);

impl Loader<String> for DocumentLoader {
    type Value = Vec<DocumentRow>;
    type Error = Arc<sqlx::Error>;

    async fn load(&self, keys: &[String]) -> Result<HashMap<String, Self::Value>, Self::Error> {
        documents::of_agents(&self.0, keys).await.map_err(Arc::new)
    }
}

/// What the prober saw (endpoints and MCP tools) by agent key.
pub(crate) struct LivenessLoader(pub(crate) AnyPool);

impl Loader<String> for LivenessLoader {
    type Value = liveness::AgentProbes;
    type Error = Arc<sqlx::Error>;

    async fn load(&self, keys: &[String]) -> Result<HashMap<String, Self::Value>, Self::Error> {
        liveness::of_agents(&self.0, keys).await.map_err(Arc::new)
    }
}

/// Which Masumi agent's newest escrows, and how many of them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct EscrowPageKey {
    /// The agent.
    pub(crate) agent: String,
    /// How many escrows.
    pub(crate) rows: i64,
}

/// Masumi agents' newest escrows, one statement for the agents asking the same number.
pub(crate) struct EscrowLoader(pub(crate) AnyPool);

impl Loader<EscrowPageKey> for EscrowLoader {
    type Value = Vec<EscrowRow>;
    type Error = Arc<sqlx::Error>;

    async fn load(
        &self,
        keys: &[EscrowPageKey],
    ) -> Result<HashMap<EscrowPageKey, Self::Value>, Self::Error> {
        let mut by_rows: BTreeMap<i64, Vec<String>> = BTreeMap::new();
        for key in keys {
            by_rows.entry(key.rows).or_default().push(key.agent.clone());
        }
        let mut out = HashMap::new();
        for (rows, agents) in by_rows {
            let found = masumi_payments::newest(&self.0, &agents, rows)
                .await
                .map_err(Arc::new)?;
            out.extend(
                found
                    .into_iter()
                    .map(|(agent, list)| (EscrowPageKey { agent, rows }, list)),
            );
        }
        Ok(out)
    }
}

/// How Masumi agents' escrows ended (outcome, or none while open, with a count) by agent key.
pub(crate) struct EscrowOutcomeLoader(pub(crate) AnyPool);

impl Loader<String> for EscrowOutcomeLoader {
    type Value = Vec<(Option<String>, i64)>;
    type Error = Arc<sqlx::Error>;

    async fn load(&self, keys: &[String]) -> Result<HashMap<String, Self::Value>, Self::Error> {
        masumi_payments::outcomes(&self.0, keys)
            .await
            .map_err(Arc::new)
    }
}

/// One agent's row of a declared per-agent table (keyed by `agent_key`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct AgentRowKey {
    /// The table, as declared in `agentindex_indexer::schema`.
    pub(crate) table: &'static str,
    /// The agent.
    pub(crate) agent: String,
}

impl AgentRowKey {
    /// `agent`'s row of `table`.
    pub(crate) fn new(table: &'static Table, agent: &str) -> Self {
        Self {
            table: table.name,
            agent: agent.to_string(),
        }
    }
}

/// Rows of any declared per-agent table by agent, read once per table for every agent asked.
pub(crate) struct AgentRowLoader(pub(crate) AnyPool);

impl Loader<AgentRowKey> for AgentRowLoader {
    type Value = Arc<Cells>;
    type Error = Arc<sqlx::Error>;

    async fn load(
        &self,
        keys: &[AgentRowKey],
    ) -> Result<HashMap<AgentRowKey, Self::Value>, Self::Error> {
        let mut by_table: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
        for key in keys {
            by_table
                .entry(key.table)
                .or_default()
                .push(key.agent.clone());
        }
        let mut out = HashMap::new();
        for (name, agents) in by_table {
            let Some(table) = agentindex_indexer::schema::table(name) else {
                continue;
            };
            let rows = agent_rows::of_agents(&self.0, table, &agents)
                .await
                .map_err(Arc::new)?;
            out.extend(
                rows.into_iter()
                    .map(|(agent, cells)| (AgentRowKey { table: name, agent }, cells)),
            );
        }
        Ok(out)
    }
}

/// Which page of which agent's list a resolver asks for: keys asking the same page of many
/// agents are read together, one `UNION ALL` branch per agent.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct PageKey {
    /// The agent.
    pub(crate) agent: String,
    /// Its page.
    pub(crate) window: Window,
}

/// Reads the page each of `keys` asks for with `read`, grouping keys by their page.
async fn pages<'a, R>(
    keys: &[PageKey],
    read: impl Fn(Vec<String>, Window) -> BoxFuture<'a, sqlx::Result<HashMap<String, Vec<R>>>>,
) -> Result<HashMap<PageKey, Vec<R>>, Arc<sqlx::Error>> {
    let mut by_window: HashMap<Window, Vec<String>> = HashMap::new();
    for key in keys {
        by_window
            .entry(key.window)
            .or_default()
            .push(key.agent.clone());
    }
    let mut out = HashMap::new();
    for (window, agents) in by_window {
        let found = read(agents, window).await.map_err(Arc::new)?;
        for (agent, rows) in found {
            out.insert(PageKey { agent, window }, rows);
        }
    }
    Ok(out)
}

/// A page of ERC-8004 feedback by agent.
pub(crate) struct FeedbackLoader(pub(crate) AnyPool);

impl Loader<PageKey> for FeedbackLoader {
    type Value = Vec<FeedbackRow>;
    type Error = Arc<sqlx::Error>;

    async fn load(&self, keys: &[PageKey]) -> Result<HashMap<PageKey, Self::Value>, Self::Error> {
        pages(keys, |agents, window| {
            Box::pin(async move { activity::feedback(&self.0, &agents, window).await })
        })
        .await
    }
}

/// A page of ERC-8004 validation requests by agent.
pub(crate) struct ValidationLoader(pub(crate) AnyPool);

impl Loader<PageKey> for ValidationLoader {
    type Value = Vec<ValidationRow>;
    type Error = Arc<sqlx::Error>;

    async fn load(&self, keys: &[PageKey]) -> Result<HashMap<PageKey, Self::Value>, Self::Error> {
        pages(keys, |agents, window| {
            Box::pin(async move { activity::validations(&self.0, &agents, window).await })
        })
        .await
    }
}

/// How many items one of its lists holds, by (list, agent key); counted, never loaded.
pub(crate) struct CountLoader(pub(crate) AnyPool);

impl Loader<(Relation, String)> for CountLoader {
    type Value = i64;
    type Error = Arc<sqlx::Error>;

    async fn load(
        &self,
        keys: &[(Relation, String)],
    ) -> Result<HashMap<(Relation, String), Self::Value>, Self::Error> {
        let mut by_relation: HashMap<Relation, Vec<String>> = HashMap::new();
        for (relation, agent) in keys {
            by_relation
                .entry(*relation)
                .or_default()
                .push(agent.clone());
        }
        let mut out = HashMap::new();
        for (relation, agents) in by_relation {
            let counted = counts::of_agents(&self.0, relation, &agents)
                .await
                .map_err(Arc::new)?;
            out.extend(
                counted
                    .into_iter()
                    .map(|(agent, count)| ((relation, agent), count)),
            );
        }
        Ok(out)
    }
}

/// Stored reputation evaluations, parsed, by agent key (agents without one are left out).
pub(crate) struct EvaluationLoader(pub(crate) AnyPool);

impl Loader<String> for EvaluationLoader {
    type Value = Arc<Evaluation>;
    /// What failed, naming the column when a stored evaluation does not read back.
    type Error = Arc<String>;

    async fn load(&self, keys: &[String]) -> Result<HashMap<String, Self::Value>, Self::Error> {
        let stored = evaluations::of_agents(&self.0, keys)
            .await
            .map_err(|error| {
                let column = agent_reputation::evaluation.qualified();
                Arc::new(format!("reading {column}: {error}"))
            })?;
        stored
            .into_iter()
            .map(|(key, text)| {
                let parsed: Evaluation = serde_json::from_str(&text).map_err(|error| {
                    let column = agent_reputation::evaluation.qualified();
                    Arc::new(format!("{column} of {key} does not read back: {error}"))
                })?;
                Ok((key, Arc::new(parsed)))
            })
            .collect()
    }
}

/// A page of credited payments, newest first, with why each does not count, by agent.
pub(crate) struct PaymentLoader(pub(crate) ApiState);

impl Loader<PageKey> for PaymentLoader {
    type Value = Vec<(Payment, Option<Exclusion>)>;
    type Error = Arc<StoreError>;

    async fn load(&self, keys: &[PageKey]) -> Result<HashMap<PageKey, Self::Value>, Self::Error> {
        // Rules differ by chain, pages by request: one read per (chain, page).
        let mut groups: BTreeMap<(u64, PageWindow), Vec<String>> = BTreeMap::new();
        let mut windows: HashMap<PageWindow, Window> = HashMap::new();
        for key in keys {
            let parsed: AgentKey = key.agent.parse().map_err(|error: AgentKeyError| {
                Arc::new(StoreError::Corrupt {
                    what: agents::agent_key.qualified(),
                    reason: error.to_string(),
                })
            })?;
            let page = key.window.in_store();
            windows.insert(page, key.window);
            groups
                .entry((parsed.chain_id(), page))
                .or_default()
                .push(key.agent.clone());
        }
        let mut out = HashMap::new();
        for ((chain_id, page), agents) in groups {
            let rules = self.0.rules.get(&chain_id).cloned().unwrap_or_default();
            let found = self
                .0
                .store
                .classified_payments(chain_id, &agents, page, &rules)
                .await
                .map_err(Arc::new)?;
            let window = windows[&page];
            out.extend(
                found
                    .into_iter()
                    .map(|(agent, rows)| (PageKey { agent, window }, rows)),
            );
        }
        Ok(out)
    }
}

/// A page of on-chain history by agent.
pub(crate) struct HistoryLoader(pub(crate) AnyPool);

impl Loader<PageKey> for HistoryLoader {
    type Value = Vec<HistoryRow>;
    type Error = Arc<sqlx::Error>;

    async fn load(&self, keys: &[PageKey]) -> Result<HashMap<PageKey, Self::Value>, Self::Error> {
        pages(keys, |agents, window| {
            Box::pin(async move { activity::history(&self.0, &agents, window).await })
        })
        .await
    }
}
