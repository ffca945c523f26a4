//! The indexer's own Prometheus metrics, one set per process: RPC requests, errors and latency by
//! endpoint and method, `eth_getLogs` range sizes, reorgs and their depth, events stored by
//! source and kind, how each range's logs were fetched and the scan densities the cost model
//! estimates, documents fetched and failed by reason, reputation recomputations. The API's
//! `/metrics` registers them beside its own ([`IndexerMetrics::register`]).

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::sync::LazyLock;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

/// An RPC call: the endpoint (scheme, host and port only: paths often hold API keys) and method.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RpcLabels {
    endpoint: String,
    method: String,
}

/// A failed RPC call and why: range_too_large, too_many_results, transient, unknown, reverted or
/// unsupported.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RpcErrorLabels {
    endpoint: String,
    method: String,
    kind: String,
}

/// One chain, by id.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ChainLabel {
    chain_id: String,
}

/// Events stored: chain id, source (the contract's role) and kind (the event's name, or
/// `undecodable`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct EventLabels {
    chain_id: String,
    source: String,
    kind: String,
}

/// How one family of logs was fetched for a range: chain id, family (`agents`, `payments`) and
/// way (`addresses`, `scan`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct FetchLabels {
    chain_id: String,
    family: String,
    way: String,
}

/// A family of logs on one chain.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct FamilyLabels {
    chain_id: String,
    family: String,
}

/// A document fetch's outcome: fetched, not_modified or failed, and for failures the lint
/// code that says why.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct DocumentLabels {
    outcome: String,
    reason: String,
}

/// Labels of an endpoint probe: the endpoint's kind, what the probe found and, when it was
/// not up, the reason class.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ProbeLabels {
    kind: String,
    status: String,
    reason: String,
}

/// Every indexer metric.
#[derive(Debug)]
pub struct IndexerMetrics {
    rpc_requests: Family<RpcLabels, Counter>,
    rpc_errors: Family<RpcErrorLabels, Counter>,
    rpc_seconds: Family<RpcLabels, Histogram>,
    range_blocks: Family<ChainLabel, Histogram>,
    reorgs: Family<ChainLabel, Counter>,
    reorg_depth: Family<ChainLabel, Histogram>,
    events: Family<EventLabels, Counter>,
    documents: Family<DocumentLabels, Counter>,
    probes: Family<ProbeLabels, Counter>,
    reputation: Family<ChainLabel, Counter>,
    fetch_ways: Family<FetchLabels, Counter>,
    scan_density: Family<FamilyLabels, Gauge<f64, AtomicU64>>,
}

static METRICS: LazyLock<IndexerMetrics> = LazyLock::new(|| IndexerMetrics {
    rpc_requests: Family::default(),
    rpc_errors: Family::default(),
    rpc_seconds: Family::new_with_constructor(|| {
        Histogram::new(exponential_buckets(0.001, 2.0, 15))
    }),
    range_blocks: Family::new_with_constructor(|| {
        Histogram::new(exponential_buckets(1.0, 4.0, 10))
    }),
    reorgs: Family::default(),
    reorg_depth: Family::new_with_constructor(|| Histogram::new(exponential_buckets(1.0, 2.0, 10))),
    events: Family::default(),
    documents: Family::default(),
    probes: Family::default(),
    reputation: Family::default(),
    fetch_ways: Family::default(),
    scan_density: Family::default(),
});

/// This process's indexer metrics.
pub fn metrics() -> &'static IndexerMetrics {
    &METRICS
}

impl IndexerMetrics {
    /// Adds every indexer metric to `registry` (they stay shared with the indexer).
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "rpc_requests",
            "RPC requests by endpoint and method",
            self.rpc_requests.clone(),
        );
        registry.register(
            "rpc_errors",
            "Failed RPC requests by endpoint, method and kind",
            self.rpc_errors.clone(),
        );
        registry.register(
            "rpc_request_seconds",
            "RPC latency by endpoint and method",
            self.rpc_seconds.clone(),
        );
        registry.register(
            "log_range_blocks",
            "Blocks per eth_getLogs range",
            self.range_blocks.clone(),
        );
        registry.register("reorgs", "Reorgs undone", self.reorgs.clone());
        registry.register(
            "reorg_depth_blocks",
            "Blocks undone per reorg",
            self.reorg_depth.clone(),
        );
        registry.register(
            "events_stored",
            "Events committed, by chain, source and kind",
            self.events.clone(),
        );
        registry.register(
            "documents",
            "Document fetches by outcome and failure reason",
            self.documents.clone(),
        );
        registry.register(
            "endpoint_probes",
            "Endpoint probes by kind, status and the reason an endpoint was not up",
            self.probes.clone(),
        );
        registry.register(
            "reputation_recomputations",
            "Agents whose reputation was recomputed",
            self.reputation.clone(),
        );
        registry.register(
            "fetch_ranges",
            "Ranges fetched, by chain, family of logs (agents, payments) and the way the cost model chose (addresses, scan)",
            self.fetch_ways.clone(),
        );
        registry.register(
            "fetch_scan_density",
            "Logs per block a scan of the family's event signatures returns, as the cost model estimates it",
            self.scan_density.clone(),
        );
    }

    /// A range of `chain` whose `family` of logs was fetched `way`.
    pub fn fetch_way(&self, chain_id: u64, family: &str, way: &str) {
        self.fetch_ways
            .get_or_create(&FetchLabels {
                chain_id: chain_id.to_string(),
                family: family.to_string(),
                way: way.to_string(),
            })
            .inc();
    }

    /// The cost model's estimate of a scan's logs per block for `family` on `chain`.
    pub fn scan_density(&self, chain_id: u64, family: &str, logs_per_block: f64) {
        self.scan_density
            .get_or_create(&FamilyLabels {
                chain_id: chain_id.to_string(),
                family: family.to_string(),
            })
            .set(logs_per_block);
    }

    /// One RPC call to `endpoint` of `method` that took `took`, failed with `error_kind` if any.
    pub fn rpc(&self, endpoint: &str, method: &str, took: Duration, error_kind: Option<&str>) {
        let labels = RpcLabels {
            endpoint: endpoint_label(endpoint),
            method: method.to_string(),
        };
        self.rpc_requests.get_or_create(&labels).inc();
        self.rpc_seconds
            .get_or_create(&labels)
            .observe(took.as_secs_f64());
        if let Some(kind) = error_kind {
            self.rpc_errors
                .get_or_create(&RpcErrorLabels {
                    endpoint: labels.endpoint,
                    method: labels.method,
                    kind: kind.to_string(),
                })
                .inc();
        }
    }

    /// An `eth_getLogs` range of `blocks` blocks on `chain`.
    pub fn log_range(&self, chain_id: u64, blocks: u64) {
        self.range_blocks
            .get_or_create(&chain_label(chain_id))
            .observe(blocks as f64);
    }

    /// A reorg on `chain` that undid `depth` blocks.
    pub fn reorg(&self, chain_id: u64, depth: u64) {
        self.reorgs.get_or_create(&chain_label(chain_id)).inc();
        self.reorg_depth
            .get_or_create(&chain_label(chain_id))
            .observe(depth as f64);
    }

    /// `count` events of `kind` from a `source` contract committed on `chain`.
    pub fn events(&self, chain_id: u64, source: &str, kind: &str, count: u64) {
        self.events
            .get_or_create(&EventLabels {
                chain_id: chain_id.to_string(),
                source: source.to_string(),
                kind: kind.to_string(),
            })
            .inc_by(count);
    }

    /// A document fetch: `outcome` and, for a failure, the lint code saying why.
    pub fn document(&self, outcome: &str, reason: &str) {
        self.documents
            .get_or_create(&DocumentLabels {
                outcome: outcome.to_string(),
                reason: reason.to_string(),
            })
            .inc();
    }

    /// An endpoint probe of `kind` that found `status`, for `reason` when not up.
    pub fn probe(&self, kind: &str, status: &str, reason: &str) {
        self.probes
            .get_or_create(&ProbeLabels {
                kind: kind.to_string(),
                status: status.to_string(),
                reason: reason.to_string(),
            })
            .inc();
    }

    /// `agents` reputation rows recomputed on `chain`.
    pub fn reputation(&self, chain_id: u64, agents: u64) {
        self.reputation
            .get_or_create(&chain_label(chain_id))
            .inc_by(agents);
    }
}

fn chain_label(chain_id: u64) -> ChainLabel {
    ChainLabel {
        chain_id: chain_id.to_string(),
    }
}

/// `scheme://host:port` of an endpoint URL; whatever else it holds (paths and queries often
/// carry API keys) stays out of the metrics.
fn endpoint_label(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(url) => match (url.host_str(), url.port_or_known_default()) {
            (Some(host), Some(port)) => format!("{}://{host}:{port}", url.scheme()),
            (Some(host), None) => format!("{}://{host}", url.scheme()),
            _ => url.scheme().to_string(),
        },
        Err(_) => "unparsable".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::endpoint_label;

    #[test]
    fn endpoint_labels_keep_no_keys() {
        assert_eq!(
            endpoint_label("https://eth-mainnet.example.com/v2/SECRETKEY?x=1"),
            "https://eth-mainnet.example.com:443"
        );
        assert_eq!(
            endpoint_label("http://user:pw@127.0.0.1:8545/"),
            "http://127.0.0.1:8545"
        );
    }
}
