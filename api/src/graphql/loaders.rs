//! DataLoaders: every relation an agent list needs is read once per request for all agents on
//! the page, never once per agent.

use crate::read::activity::{self, FeedbackRow, HistoryRow, ValidationRow};
use crate::read::documents::{self, DocumentRow};
use crate::read::evaluations;
use crate::read::skills::{self, SkillRow};
use crate::state::ApiState;
use agentindex_indexer::primitives::{AgentKey, AgentKeyError};
use agentindex_indexer::reputation::{Evaluation, Exclusion, Payment};
use agentindex_indexer::store::StoreError;
use agentindex_indexer::store::StoreRead;
use async_graphql::dataloader::Loader;
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

/// ERC-8004 feedback by agent key.
pub(crate) struct FeedbackLoader(pub(crate) AnyPool);

impl Loader<String> for FeedbackLoader {
    type Value = Vec<FeedbackRow>;
    type Error = Arc<sqlx::Error>;

    async fn load(&self, keys: &[String]) -> Result<HashMap<String, Self::Value>, Self::Error> {
        activity::feedback(&self.0, keys).await.map_err(Arc::new)
    }
}

/// ERC-8004 validation requests by agent key.
pub(crate) struct ValidationLoader(pub(crate) AnyPool);

impl Loader<String> for ValidationLoader {
    type Value = Vec<ValidationRow>;
    type Error = Arc<sqlx::Error>;

    async fn load(&self, keys: &[String]) -> Result<HashMap<String, Self::Value>, Self::Error> {
        activity::validations(&self.0, keys).await.map_err(Arc::new)
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
            .map_err(|error| Arc::new(format!("reading agent_reputation.evaluation: {error}")))?;
        stored
            .into_iter()
            .map(|(key, text)| {
                let parsed: Evaluation = serde_json::from_str(&text).map_err(|error| {
                    Arc::new(format!(
                        "agent_reputation.evaluation of {key} does not read back: {error}"
                    ))
                })?;
                Ok((key, Arc::new(parsed)))
            })
            .collect()
    }
}

/// Credited payments, newest first, with why each does not count, by agent key.
pub(crate) struct PaymentLoader(pub(crate) ApiState);

impl Loader<String> for PaymentLoader {
    type Value = Vec<(Payment, Option<Exclusion>)>;
    type Error = Arc<StoreError>;

    async fn load(&self, keys: &[String]) -> Result<HashMap<String, Self::Value>, Self::Error> {
        let mut by_chain: BTreeMap<u64, Vec<String>> = BTreeMap::new();
        for key in keys {
            let parsed: AgentKey = key.parse().map_err(|error: AgentKeyError| {
                Arc::new(StoreError::Corrupt {
                    what: "agents.agent_key".into(),
                    reason: error.to_string(),
                })
            })?;
            by_chain
                .entry(parsed.chain_id())
                .or_default()
                .push(key.clone());
        }
        let mut out = HashMap::new();
        for (chain_id, keys) in by_chain {
            let rules = self.0.rules.get(&chain_id).cloned().unwrap_or_default();
            let found = self
                .0
                .store
                .classified_payments(chain_id, &keys, &rules)
                .await
                .map_err(Arc::new)?;
            out.extend(found);
        }
        Ok(out)
    }
}

/// On-chain history by agent key.
pub(crate) struct HistoryLoader(pub(crate) AnyPool);

impl Loader<String> for HistoryLoader {
    type Value = Vec<HistoryRow>;
    type Error = Arc<sqlx::Error>;

    async fn load(&self, keys: &[String]) -> Result<HashMap<String, Self::Value>, Self::Error> {
        activity::history(&self.0, keys).await.map_err(Arc::new)
    }
}
