//! What every request handler reads from: the store, per configured chain the rules its
//! reputation is computed under, and whether the index is ready to be asked.

use crate::agent_lookups::AgentLookups;
use crate::cache::ResponseCache;
use crate::changes::ChangeFeed;
use crate::common_words::CommonWords;
use crate::facet_cache::FacetCache;
use crate::feed_cache::FeedCache;
use crate::metrics::ApiMetrics;
use crate::term_counts::TermCounts;
use agentindex_indexer::config::{ApiConfig, Config, PaymentToken};
use agentindex_indexer::health::HealthBoard;
use agentindex_indexer::reputation::ReputationRules;
use agentindex_indexer::store::StoreRead;
use agentindex_indexer::store::{Store, StoreResult};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Shared, read-only state of the HTTP server.
#[derive(Debug, Clone)]
pub struct ApiState {
    /// The open store (handlers use its read pool).
    pub store: Store,
    /// Reputation rules by chain id, as the config sets them.
    pub rules: Arc<BTreeMap<u64, ReputationRules>>,
    /// Every configured payment token with its chain id (symbols and decimals for display).
    pub(crate) tokens: Arc<Vec<(u64, PaymentToken)>>,
    /// Set once every chain reached its head (or at once when nothing indexes beside us).
    ready: Arc<AtomicBool>,
    /// Whether readiness waits for the chains (true under `run`).
    waits_for_chains: bool,
    /// Committed changes, for subscriptions.
    pub(crate) changes: ChangeFeed,
    /// `[api]` as configured.
    pub(crate) api: ApiConfig,
    /// What `/metrics` shows.
    pub(crate) metrics: Arc<ApiMetrics>,
    /// Query responses while the database is unchanged.
    pub(crate) cache: Arc<ResponseCache>,
    /// Lookups of single agents by key (coalesced on PostgreSQL).
    pub(crate) lookups: AgentLookups,
    /// Skill and tag facets between requests.
    pub(crate) facets: Arc<FacetCache>,
    /// How many agents hold each skill or tag, for sizing list walks.
    pub(crate) term_counts: Arc<TermCounts>,
    /// The words most agents' names hold, which a name search does not look up by.
    pub(crate) common_words: Arc<CommonWords>,
    /// Reputation feeds computed, and the one being computed.
    pub(crate) feeds: Arc<FeedCache>,
    /// What the followers of this process meet (under `run`); `None` when only serving.
    pub(crate) health: Option<Arc<HealthBoard>>,
}

impl ApiState {
    /// State for serving `store` under `config` alone: ready as soon as it serves. Starts the
    /// change feed, so it must be called inside the Tokio runtime.
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
            .chain(config.cardano.iter().map(|network| {
                (
                    network.chain_id(),
                    ReputationRules::of_cardano(network.network, &config.reputation),
                )
            }))
            .collect();
        let tokens = config
            .chains
            .iter()
            .flat_map(|chain| {
                chain
                    .payment_tokens
                    .iter()
                    .map(|token| (chain.chain_id, token.clone()))
            })
            .collect();
        let caches = &config.api.caches;
        let cache = Arc::new(ResponseCache::new(
            store.reader().clone(),
            caches.response_cache_bytes,
        ));
        let facets = Arc::new(FacetCache::new(
            caches.facet_cache_entries,
            config.chain_ids(),
        ));
        // Its handle is not kept: a failed count is logged, and the first dashboard counts.
        drop(facets.warm(&store, Arc::clone(&cache)));
        let metrics = Arc::new(ApiMetrics::new(std::time::Duration::from_secs(
            caches.metrics_cache_secs,
        )));
        let feeds = Arc::new(FeedCache::new(
            caches.feed_cache_bytes,
            std::time::Duration::from_secs(caches.feed_timeout_secs),
            metrics.feed_computations(),
            config.api.unlimited_clients.clone(),
        ));
        Self {
            lookups: AgentLookups::start(store.reader(), metrics.agent_lookup_reads()),
            facets,
            term_counts: Arc::default(),
            common_words: Arc::default(),
            feeds,
            tokens: Arc::new(tokens),
            changes: ChangeFeed::start(store.clone()),
            cache,
            store,
            rules: Arc::new(rules),
            ready: Arc::new(AtomicBool::new(true)),
            waits_for_chains: false,
            health: None,
            api: config.api.clone(),
            metrics,
        }
    }

    /// State for serving beside the indexer: ready once every chain reached its head once;
    /// `/status` and `/readyz` also say what the followers meet, from `health`.
    pub fn indexing(store: Store, config: &Config, health: Arc<HealthBoard>) -> Self {
        Self {
            ready: Arc::new(AtomicBool::new(false)),
            waits_for_chains: true,
            health: Some(health),
            ..Self::new(store, config)
        }
    }

    /// Whether to answer `/readyz` with 200.
    pub async fn ready(&self) -> StoreResult<bool> {
        if self.ready.load(Ordering::Relaxed) || !self.waits_for_chains {
            return Ok(true);
        }
        let statuses = self.store.statuses().await?;
        let all_at_head = self.rules.keys().all(|chain_id| {
            statuses.iter().any(|s| {
                s.chain_id == *chain_id
                    && s.head_block > 0
                    && s.indexed_block.is_some_and(|b| b >= s.head_block)
            })
        });
        if all_at_head {
            self.ready.store(true, Ordering::Relaxed);
        }
        Ok(all_at_head)
    }
}
