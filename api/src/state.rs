//! What every request handler reads from: the store and, per configured chain, the rules its
//! reputation is computed under.

use agentindex_indexer::config::Config;
use agentindex_indexer::reputation::ReputationRules;
use agentindex_indexer::store::Store;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Shared, read-only state of the HTTP server.
#[derive(Debug, Clone)]
pub struct ApiState {
    /// The open store (handlers use its read pool).
    pub store: Store,
    /// Reputation rules by chain id, as the config sets them.
    pub rules: Arc<BTreeMap<u64, ReputationRules>>,
}

impl ApiState {
    /// State for `store` under `config`.
    pub fn new(store: Store, config: &Config) -> Self {
        let rules = config
            .chains
            .iter()
            .map(|chain| {
                (
                    chain.chain_id,
                    ReputationRules::of_chain(chain, &config.reputation),
                )
            })
            .collect();
        Self {
            store,
            rules: Arc::new(rules),
        }
    }
}
