//! `/metrics` in the Prometheus (OpenMetrics) text format: every chain's head, finalized and
//! indexed block and lag, agents by chain and source (read from the store at each scrape), the
//! API's own requests, latency by GraphQL operation and rate-limited requests, and the indexer's
//! metrics of this process ([`agentindex_indexer::metrics`]), and the bytes the caches hold.
//!
//! A scrape is cheap whatever the scrape rate: what is read from the database, and the text
//! rendered with it, is reused for `[api.caches] metrics_cache_secs`, and scrapes that arrive
//! while one renders wait for it rather than reading the database again. Those reads run at
//! low priority ([`low_priority::scope`]): counting agents by chain and source reads every
//! agent (0.9 s of a core at a million agents), and nobody's answer waits on a scrape.

use agentindex_indexer::schema::agents;
use agentindex_indexer::store::StoreRead;
use agentindex_indexer::store::{Store, low_priority};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Why `/metrics` could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    /// The chains' status could not be read.
    #[error("reading the chains' status: {0}")]
    Status(#[from] agentindex_indexer::store::StoreError),
    /// Agents could not be counted.
    #[error("counting agents by chain and source: {0}")]
    Agents(#[from] sqlx::Error),
    /// The text could not be written.
    #[error("encoding the metrics: {0}")]
    Encode(#[from] std::fmt::Error),
}

/// What the caches hold at a scrape.
#[derive(Debug, Clone, Copy)]
pub struct CacheSizes {
    /// Bytes of the response cache.
    pub response_bytes: usize,
    /// Bytes of kept reputation feeds.
    pub feed_bytes: usize,
    /// Facet counts kept.
    pub facet_entries: usize,
}

/// Labels of one chain.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ChainLabels {
    chain_id: String,
    chain: String,
}

/// Labels of agents by chain and source.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SourceLabels {
    chain_id: String,
    source: String,
}

/// Labels of an API operation: the GraphQL operation name (or `anonymous`), prefixed with
/// `subgraph:` for the subgraph endpoint's.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OperationLabels {
    operation: String,
}

/// The endpoint a request was answered on: each counts its operations apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// `/graphql`: counted under the operation's name.
    Graphql,
    /// The agent0 subgraph (`/subgraphs/name/agent0`, with or without a chain): counted under
    /// `subgraph:{operation}`. A GraphQL name holds no `:`, so no `/graphql` operation is
    /// counted with them.
    Subgraph,
    /// The MCP server (`/mcp`, `agentindex mcp`): counted under `mcp:{tool}`.
    Mcp,
}

impl Endpoint {
    fn prefix(self) -> &'static str {
        match self {
            Endpoint::Graphql => "",
            Endpoint::Subgraph => "subgraph:",
            Endpoint::Mcp => "mcp:",
        }
    }
}

/// The API's metrics and the registry that renders them.
#[derive(Debug)]
pub struct ApiMetrics {
    registry: Registry,
    head: Family<ChainLabels, Gauge>,
    finalized: Family<ChainLabels, Gauge>,
    indexed: Family<ChainLabels, Gauge>,
    lag: Family<ChainLabels, Gauge>,
    agents: Family<SourceLabels, Gauge>,
    requests: Family<OperationLabels, Counter>,
    latency: Family<OperationLabels, Histogram>,
    rate_limited: Counter,
    low_priority: Counter,
    response_cache_bytes: Gauge,
    feed_cache_bytes: Gauge,
    facet_cache_entries: Gauge,
    feed_computations: Counter,
    agent_lookup_reads: Counter,
    /// How long a rendering is reused.
    reuse_for: Duration,
    /// The last rendering and when it was made.
    rendered: tokio::sync::Mutex<Option<(Instant, Arc<str>)>>,
    /// Operation names labelled so far.
    operations: std::sync::Mutex<std::collections::HashSet<String>>,
}

/// Distinct operation names `/metrics` labels at most.
pub const MAX_OPERATIONS: usize = 256;

impl ApiMetrics {
    /// Metrics whose rendering is reused for `reuse_for`.
    pub fn new(reuse_for: Duration) -> Self {
        let mut registry = Registry::with_prefix("agentindex");
        let head = Family::<ChainLabels, Gauge>::default();
        let finalized = Family::<ChainLabels, Gauge>::default();
        let indexed = Family::<ChainLabels, Gauge>::default();
        let lag = Family::<ChainLabels, Gauge>::default();
        let agents = Family::<SourceLabels, Gauge>::default();
        let requests = Family::<OperationLabels, Counter>::default();
        let latency = Family::<OperationLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(exponential_buckets(0.0005, 2.0, 16))
        });
        let rate_limited = Counter::default();
        let low_priority = Counter::default();
        registry.register("chain_head_block", "Newest head block seen", head.clone());
        registry.register(
            "chain_finalized_block",
            "Newest finalized block seen",
            finalized.clone(),
        );
        registry.register(
            "chain_indexed_block",
            "Last block fully indexed",
            indexed.clone(),
        );
        registry.register(
            "chain_lag_blocks",
            "Blocks between the head and the index",
            lag.clone(),
        );
        registry.register(
            "agents",
            "Agents indexed, by chain and source",
            agents.clone(),
        );
        registry.register(
            "api_requests",
            "API requests by GraphQL operation or route",
            requests.clone(),
        );
        registry.register(
            "api_request_seconds",
            "API request latency by GraphQL operation or route",
            latency.clone(),
        );
        registry.register(
            "api_rate_limited_requests",
            "Requests refused with 429 by the per-client rate limit",
            rate_limited.clone(),
        );
        registry.register(
            "api_low_priority_requests",
            "Requests of clients that had used much of their share of the server's time, run at low priority",
            low_priority.clone(),
        );
        let response_cache_bytes = Gauge::default();
        let feed_cache_bytes = Gauge::default();
        let facet_cache_entries = Gauge::default();
        registry.register(
            "api_response_cache_bytes",
            "Bytes held by the GraphQL and subgraph response cache (keys, bodies, bookkeeping)",
            response_cache_bytes.clone(),
        );
        registry.register(
            "api_feed_cache_bytes",
            "Bytes of reputation feeds kept",
            feed_cache_bytes.clone(),
        );
        registry.register(
            "api_facet_cache_entries",
            "Skill and tag facet counts kept",
            facet_cache_entries.clone(),
        );
        let feed_computations = Counter::default();
        registry.register(
            "api_feed_computations",
            "Reputation feeds computed (not served from the feed cache)",
            feed_computations.clone(),
        );
        let agent_lookup_reads = Counter::default();
        registry.register(
            "api_agent_lookup_reads",
            "Statements that read agents looked up by id (on PostgreSQL, lookups waiting together share one)",
            agent_lookup_reads.clone(),
        );
        agentindex_indexer::metrics::metrics().register(&mut registry);
        Self {
            feed_computations,
            agent_lookup_reads,
            response_cache_bytes,
            feed_cache_bytes,
            facet_cache_entries,
            reuse_for,
            rendered: tokio::sync::Mutex::new(None),
            registry,
            head,
            finalized,
            indexed,
            lag,
            agents,
            requests,
            latency,
            rate_limited,
            low_priority,
            operations: Default::default(),
        }
    }

    /// Counts one request of `operation` on `endpoint` that took `took`. Clients name
    /// operations, so the names kept are bounded: valid GraphQL names of at most 64 characters,
    /// at most [`MAX_OPERATIONS`] of them over both endpoints; the rest count as `other` (with
    /// the endpoint's prefix).
    pub fn observe(&self, endpoint: Endpoint, operation: &str, took: Duration) {
        let valid = !operation.is_empty()
            && operation.len() <= 64
            && operation
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_');
        let prefix = endpoint.prefix();
        let named = format!("{prefix}{operation}");
        let mut labels = OperationLabels {
            operation: named.clone(),
        };
        if !valid {
            labels.operation = format!("{prefix}other");
        } else if endpoint != Endpoint::Mcp {
            // Names clients choose are bounded; MCP's are the server's own (its tools and
            // reads), so they take no room among them.
            let mut seen = self.operations.lock().unwrap_or_else(|e| e.into_inner());
            if !seen.contains(&named) {
                if seen.len() >= MAX_OPERATIONS {
                    labels.operation = format!("{prefix}other");
                } else {
                    seen.insert(named);
                }
            }
        }
        self.requests.get_or_create(&labels).inc();
        self.latency
            .get_or_create(&labels)
            .observe(took.as_secs_f64());
    }

    /// The counter of feed computations, for the feed cache to count with.
    pub(crate) fn feed_computations(&self) -> Counter {
        self.feed_computations.clone()
    }

    /// The counter of statements reading agents looked up by id, for
    /// [`crate::agent_lookups`].
    pub(crate) fn agent_lookup_reads(&self) -> Counter {
        self.agent_lookup_reads.clone()
    }

    /// Counts a request refused by the rate limit.
    pub fn rate_limited(&self) {
        self.rate_limited.inc();
    }

    /// Counts a request run on the low-priority lane.
    pub fn low_priority(&self) {
        self.low_priority.inc();
    }

    /// The text of a scrape: reused while younger than the reuse window, else the chain and
    /// agent gauges are read from `store`, the caches' sizes from `caches`, and everything is
    /// rendered anew.
    pub async fn render(
        &self,
        store: &Store,
        caches: impl FnOnce() -> CacheSizes,
    ) -> Result<Arc<str>, MetricsError> {
        let mut rendered = self.rendered.lock().await;
        if let Some((at, text)) = &*rendered
            && at.elapsed() < self.reuse_for
        {
            return Ok(Arc::clone(text));
        }
        low_priority::scope(self.read(store)).await?;
        let sizes = caches();
        self.response_cache_bytes.set(sizes.response_bytes as i64);
        self.feed_cache_bytes.set(sizes.feed_bytes as i64);
        self.facet_cache_entries.set(sizes.facet_entries as i64);
        let mut text = String::new();
        encode(&mut text, &self.registry)?;
        let text: Arc<str> = text.into();
        *rendered = Some((Instant::now(), Arc::clone(&text)));
        Ok(text)
    }

    /// Reads the chain and agent gauges from `store`.
    async fn read(&self, store: &Store) -> Result<(), MetricsError> {
        let statuses = store.statuses().await?;
        for s in statuses {
            let labels = ChainLabels {
                chain_id: s.chain_id.to_string(),
                chain: s.name.clone(),
            };
            self.head.get_or_create(&labels).set(s.head_block as i64);
            self.finalized
                .get_or_create(&labels)
                .set(s.finalized_block as i64);
            self.indexed
                .get_or_create(&labels)
                .set(s.indexed_block.map_or(0, |b| b as i64));
            self.lag.get_or_create(&labels).set(s.lag as i64);
        }
        let counts: Vec<(i64, String, i64)> = sqlx::query_as(&format!(
            "SELECT chain_id, source, count(*) FROM {} GROUP BY chain_id, source",
            agents::NAME
        ))
        .fetch_all(store.reader())
        .await?;
        for (chain_id, source, count) in counts {
            self.agents
                .get_or_create(&SourceLabels {
                    chain_id: chain_id.to_string(),
                    source,
                })
                .set(count);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_labels_are_bounded_whatever_clients_send() {
        let metrics = ApiMetrics::new(Duration::from_secs(5));
        for n in 0..MAX_OPERATIONS + 50 {
            metrics.observe(
                Endpoint::Graphql,
                &format!("Op{n}"),
                Duration::from_millis(1),
            );
        }
        metrics.observe(Endpoint::Graphql, "not a name!", Duration::from_millis(1));
        metrics.observe(Endpoint::Graphql, &"x".repeat(65), Duration::from_millis(1));
        let mut text = String::new();
        encode(&mut text, &metrics.registry).unwrap();
        let labelled = text
            .lines()
            .filter(|l| l.starts_with("agentindex_api_requests_total{"))
            .count();
        assert_eq!(labelled, MAX_OPERATIONS + 1, "the kept names and `other`");
        assert!(text.contains("agentindex_api_requests_total{operation=\"other\"} 52"));
    }

    #[test]
    fn subgraph_operations_are_counted_apart_from_graphql_ones() {
        let metrics = ApiMetrics::new(Duration::from_secs(5));
        metrics.observe(Endpoint::Subgraph, "Feedbacks", Duration::from_millis(1));
        metrics.observe(Endpoint::Subgraph, "Feedbacks", Duration::from_millis(1));
        metrics.observe(Endpoint::Subgraph, "anonymous", Duration::from_millis(1));
        metrics.observe(Endpoint::Subgraph, "not a name!", Duration::from_millis(1));
        metrics.observe(Endpoint::Graphql, "Feedbacks", Duration::from_millis(1));
        let mut text = String::new();
        encode(&mut text, &metrics.registry).unwrap();
        let count = |operation: &str| {
            let line = format!("agentindex_api_requests_total{{operation=\"{operation}\"}} ");
            text.lines()
                .find_map(|l| l.strip_prefix(&line))
                .map(|n| n.to_string())
        };
        assert_eq!(count("subgraph:Feedbacks").as_deref(), Some("2"), "{text}");
        assert_eq!(count("subgraph:anonymous").as_deref(), Some("1"));
        assert_eq!(count("subgraph:other").as_deref(), Some("1"));
        assert_eq!(count("Feedbacks").as_deref(), Some("1"));
        assert_eq!(count("other"), None, "nothing fell into /graphql's `other`");
    }

    /// A scrape's reads (every agent counted by chain and source) go to the store's
    /// low-priority connections: with the only one held, the scrape waits for it, and once
    /// it is free the scrape is rendered.
    #[tokio::test]
    async fn a_scrape_reads_the_store_at_low_priority() {
        use agentindex_indexer::store::OpenOptions;
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("metrics.db").display());
        let options = OpenOptions {
            low_priority_readers: 1,
            ..OpenOptions::default()
        };
        let store = Store::open_with(&url, options).await.unwrap();
        let sizes = || CacheSizes {
            response_bytes: 7,
            feed_bytes: 0,
            facet_entries: 0,
        };
        let metrics = ApiMetrics::new(Duration::from_secs(5));
        let held = low_priority::scope(async { store.reader().acquire().await }).await;
        let held = held.unwrap();
        let waiting =
            tokio::time::timeout(Duration::from_millis(300), metrics.render(&store, sizes));
        assert!(
            waiting.await.is_err(),
            "the scrape read the ordinary pool while the low-priority one was held"
        );
        drop(held);
        let text = metrics.render(&store, sizes).await.unwrap();
        assert!(
            text.contains("agentindex_api_response_cache_bytes 7"),
            "{text}"
        );
        store.close().await;
    }
}
