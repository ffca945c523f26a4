//! The documents worker: a loop over [`DocumentsWorker::step`], which brings document links in
//! line with the agents table, fetches the documents that are due (concurrently, under the
//! fetcher's limits; agent contracts' own `agentCard()` JSON with `eth_call`) and hands the
//! results to the store's writer. It never blocks a follower:
//! it only reads the agents table and writes through the same queue. It lives beside the engine
//! because it joins two layers: the documents it checks and the store it writes them to.

use crate::config::DocumentsConfig;
use crate::documents::{Checked, Checker, Expect, Severity, Validators};
use crate::metrics::metrics;
use crate::rpc::ChainRpc;
use crate::store::StoreRead;
use crate::store::{ChainContexts, DocumentResult, DueDocument, Store, StoreError, Writer};
use agentindex_contracts::AgentCard;
use alloy::primitives::Address;
use alloy::sol_types::SolCall;
use futures::StreamExt;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::watch;

/// Documents fetched per step at most.
const PER_STEP: i64 = 256;
/// Pause when nothing is due.
const IDLE_PAUSE: Duration = Duration::from_millis(500);

/// What one step did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentsOutcome {
    /// Fetched documents; `failed` of them could not be fetched.
    Fetched {
        /// Documents handled.
        documents: usize,
        /// Of which failed.
        failed: usize,
    },
    /// Nothing was due; `all_attempted` when every linked document was fetched or failed once.
    Idle {
        /// Every linked document was tried at least once.
        all_attempted: bool,
    },
}

/// Fetches the documents agents point at.
pub struct DocumentsWorker {
    store: Store,
    writer: Writer,
    checker: Checker,
    /// RPC per chain id, for agent contracts' on-chain cards.
    chains: BTreeMap<u64, ChainRpc>,
    /// Each chain's context, to rescore the agents a feedback file rates.
    contexts: Arc<ChainContexts>,
    /// A fetched document is fetched again after this long.
    refresh: Duration,
    /// A failed fetch is retried after this long, doubled per failure in a row, up to `refresh`.
    first_retry: Duration,
}

impl std::fmt::Debug for DocumentsWorker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DocumentsWorker")
            .field("checker", &self.checker)
            .field("chains", &self.chains.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl DocumentsWorker {
    /// A worker under the `[documents]` settings.
    pub fn new(
        config: &DocumentsConfig,
        store: Store,
        writer: Writer,
        chains: BTreeMap<u64, ChainRpc>,
        contexts: Arc<ChainContexts>,
    ) -> Result<Self, crate::documents::FetchError> {
        Ok(Self {
            checker: Checker::from_config(config)?,
            refresh: Duration::from_secs(config.refresh_secs.max(1)),
            first_retry: Duration::from_secs(config.retry_secs.max(1)),
            store,
            writer,
            chains,
            contexts,
        })
    }

    /// One round: sync links, fetch what is due, save it.
    pub async fn step(&mut self) -> Result<DocumentsOutcome, StoreError> {
        self.writer.sync_documents().await?;
        // The per-host limiter keeps a cell for every host it ever met; a registry of many
        // hosts would grow it without end.
        self.checker.fetcher.forget_idle_hosts();
        let now = unix_now();
        let due = self.store.due_documents(now, PER_STEP).await?;
        if due.is_empty() {
            return Ok(DocumentsOutcome::Idle {
                all_attempted: self.store.documents_attempted().await?,
            });
        }
        let concurrency = self.checker.fetcher.policy().concurrency;
        let results: Vec<DocumentResult> = futures::stream::iter(due)
            .map(|document| self.fetch(document))
            .buffer_unordered(concurrency)
            .collect()
            .await;
        let failed = results
            .iter()
            .filter(|r| r.checked.bytes.is_none() && !r.checked.not_modified)
            .count();
        let documents = results.len();
        self.writer
            .save_documents(results, self.contexts.clone())
            .await?;
        tracing::debug!(target: "agentindex::documents", documents, failed, "documents fetched");
        Ok(DocumentsOutcome::Fetched { documents, failed })
    }

    async fn fetch(&self, document: DueDocument) -> DocumentResult {
        let validators = Validators {
            etag: document.etag,
            last_modified: document.last_modified,
        };
        let conditional = (validators.etag.is_some() || validators.last_modified.is_some())
            .then_some(&validators);
        let checked = if document.expect == Expect::Onchain {
            self.read_onchain(&document.uri).await
        } else {
            self.checker
                .check(&document.uri, document.expect, conditional)
                .await
        };
        let now = unix_now();
        let next = if checked.bytes.is_none() && !checked.not_modified {
            let backoff = self
                .first_retry
                .saturating_mul(1 << document.failures.clamp(0, 16));
            backoff.min(self.refresh)
        } else {
            self.refresh
        };
        let failure = checked
            .report
            .lints
            .iter()
            .find(|l| l.severity == Severity::Error)
            .map_or("unknown", |l| l.code);
        match (&checked.bytes, checked.not_modified) {
            (Some(_), _) => metrics().document("fetched", ""),
            (None, true) => metrics().document("not_modified", ""),
            (None, false) => metrics().document("failed", failure),
        }
        if let Some(first) = checked.report.lints.first()
            && checked.bytes.is_none()
        {
            tracing::debug!(target: "agentindex::documents", uri = %document.uri, reason = %first.message, "document failed");
        }
        DocumentResult {
            expect: document.expect,
            checked,
            fetched_at: now,
            next_fetch_at: now + next.as_secs() as i64,
        }
    }

    /// An agent contract's `agentCard()` JSON, `uri` being `eip155:{chain}:{contract}`.
    async fn read_onchain(&self, uri: &str) -> Checked {
        let mut checked = Checked::nothing(uri);
        let mut parts = uri.split(':');
        let target = match (parts.next(), parts.next(), parts.next()) {
            (Some("eip155"), Some(chain), Some(address)) => chain
                .parse::<u64>()
                .ok()
                .zip(address.parse::<Address>().ok()),
            _ => None,
        };
        let Some((chain, address)) = target else {
            checked.report.error(
                "document.uri",
                "$",
                format!("{uri:?} is not eip155:chain:address"),
            );
            return checked;
        };
        let Some(rpc) = self.chains.get(&chain) else {
            checked.report.error(
                "document.uri",
                "$",
                format!("chain {chain} is not configured"),
            );
            return checked;
        };
        let request = AgentCard::agentCardCall {}.abi_encode();
        match rpc.call_latest(address, request.into()).await {
            Ok(output) => match AgentCard::agentCardCall::abi_decode_returns(&output) {
                Ok(json) => {
                    checked.source = Some(uri.to_string());
                    checked.read(json.into_bytes(), Expect::Onchain);
                }
                Err(error) => checked.report.error(
                    "document.call",
                    "$",
                    format!("agentCard() of {address}: undecodable answer: {error}"),
                ),
            },
            Err(error) => {
                checked.retryable = !error.kind.is_final();
                checked.report.error(
                    "document.call",
                    "$",
                    format!("agentCard() of {address}: {}", error.kind),
                );
            }
        }
        checked
    }

    /// Steps until shutdown, or (with `until_attempted`) until every linked document was tried
    /// once and `followers_done` says the chains are synced.
    pub async fn run(
        mut self,
        mut shutdown: watch::Receiver<bool>,
        until_attempted: Option<watch::Receiver<bool>>,
    ) -> Result<(), StoreError> {
        loop {
            if *shutdown.borrow() {
                return Ok(());
            }
            // Fetches may wait on slow hosts; a shutdown does not wait for them (what a dropped
            // step fetched is fetched again, and what it handed to the writer commits whole).
            let outcome = tokio::select! {
                outcome = self.step() => outcome?,
                _ = shutdown.wait_for(|stop| *stop) => return Ok(()),
            };
            if let DocumentsOutcome::Idle { all_attempted } = outcome {
                if all_attempted && until_attempted.as_ref().is_some_and(|done| *done.borrow()) {
                    // One more sync after the chains finished, so the last agents are linked.
                    if matches!(
                        self.step().await?,
                        DocumentsOutcome::Idle {
                            all_attempted: true
                        }
                    ) {
                        return Ok(());
                    }
                    continue;
                }
                tokio::select! {
                    _ = tokio::time::sleep(IDLE_PAUSE) => {}
                    _ = shutdown.changed() => {}
                }
            }
        }
    }
}

/// Seconds since the Unix epoch.
fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}
