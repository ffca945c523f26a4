//! Runs the followers of every configured chain, the documents worker, the feed keeper and
//! (with `[liveness]` on) the probe worker against one store, until they are done, one fails
//! for good, or shutdown is asked for.

mod documents_worker;
mod probe_worker;

pub use documents_worker::{DocumentsOutcome, DocumentsWorker};
pub use probe_worker::{ProbeWorker, ProbesOutcome};

use crate::cardano::Blockfrost;
use crate::config::Config;
use crate::feed::keeper::FeedKeeper;
use crate::follower::{CardanoFollower, Follower, FollowerError, Outcome};
use crate::health::HealthBoard;
use crate::liveness::LivenessPolicy;
use crate::reputation::ReputationRules;
use crate::rpc::{ChainRpc, RetryPolicy};
use crate::store::{ChainContext, ChainContexts, Store, StoreError};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinSet;

/// Pending batches the writer may queue before followers wait.
const WRITER_QUEUE: usize = 4;

/// How `index` runs.
#[derive(Debug, Clone, Default)]
pub struct IndexOptions {
    /// Stop each chain after this block.
    pub until_block: Option<u64>,
    /// Return once every chain reached its head.
    pub exit_when_synced: bool,
    /// RPC retry policy.
    pub retry: RetryPolicy,
    /// Leave documents alone: follow the chains only.
    pub skip_documents: bool,
    /// Probe no endpoints, whatever `[liveness] enabled` says.
    pub skip_probes: bool,
    /// Where the followers write what their endpoints and steps meet (a board of their own
    /// when `None`: its news is logged all the same).
    pub health: Option<Arc<HealthBoard>>,
}

/// Why indexing stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The database could not be opened.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A chain's follower failed for good.
    #[error(transparent)]
    Follower(#[from] FollowerError),
    /// The documents worker could not start.
    #[error(transparent)]
    Documents(#[from] crate::documents::FetchError),
    /// No chains are configured.
    #[error("no [[chains]] or [[cardano]] configured: nothing to index")]
    NoChains,
}

/// Indexes every chain of `config` into the store at `config.database.url`.
///
/// `progress` sees every step's outcome, by chain name.
pub async fn index(
    config: &Config,
    options: IndexOptions,
    shutdown: watch::Receiver<bool>,
    progress: impl Fn(&str, &Outcome) + Clone + Send + 'static,
) -> Result<(), EngineError> {
    if config.chains.is_empty() && config.cardano.is_empty() {
        return Err(EngineError::NoChains);
    }
    let store = Store::open(&config.database.url).await?;
    let writer = store.writer(WRITER_QUEUE);
    let contexts = Arc::new(chain_contexts(config));
    let health = options.health.clone().unwrap_or_default();
    let mut followers = JoinSet::new();
    for chain in &config.chains {
        let follower = Follower::new(
            chain.clone(),
            contexts[&chain.chain_id].clone(),
            store.clone(),
            writer.clone(),
            options.retry,
            options.until_block,
        )
        .await?
        .report_to(&health);
        let (exit, shutdown, progress) =
            (options.exit_when_synced, shutdown.clone(), progress.clone());
        followers.spawn(follower.run(exit, shutdown, move |name, outcome| progress(name, outcome)));
    }
    for network in &config.cardano {
        let source = Blockfrost::new(network).map_err(|source| FollowerError::Cardano {
            chain: network.name(),
            source,
        })?;
        let follower = CardanoFollower::new(
            network.clone(),
            contexts[&network.chain_id()].clone(),
            source,
            store.clone(),
            writer.clone(),
        )
        .await?
        .report_to(&health);
        let (exit, shutdown, progress) =
            (options.exit_when_synced, shutdown.clone(), progress.clone());
        followers.spawn(follower.run(exit, shutdown, move |name, outcome| progress(name, outcome)));
    }
    // The documents worker runs beside the followers; with exit_when_synced it stops once the
    // chains are synced and every document found was tried once.
    let (chains_done, chains_done_seen) = watch::channel(false);
    let documents = if options.skip_documents {
        None
    } else {
        let mut chains = std::collections::BTreeMap::new();
        for chain in &config.chains {
            let rpc = ChainRpc::new(chain, options.retry).map_err(|source| FollowerError::Rpc {
                chain: chain.name.clone(),
                source,
            })?;
            chains.insert(chain.chain_id, rpc);
        }
        let worker = DocumentsWorker::new(
            &config.documents,
            store.clone(),
            writer.clone(),
            chains,
            contexts.clone(),
        )?;
        let until = options.exit_when_synced.then_some(chains_done_seen);
        Some(tokio::spawn(worker.run(shutdown.clone(), until)))
    };
    // The feed keeper stores feeds at final epoch boundaries beside the followers, until they
    // stop (it has nothing to do while they backfill).
    let (stop_keeper, keeper_stop) = watch::channel(false);
    let keeper = FeedKeeper::new(
        store.clone(),
        writer.clone(),
        contexts.clone(),
        config.reputation.feeds_kept,
    );
    let keeper = tokio::spawn(keeper.run(keeper_stop.clone()));
    // The probe worker runs beside the followers when `[liveness]` is on, and stops with the
    // feed keeper: it never holds back the end of a run.
    let probes = if config.liveness.enabled && !options.skip_documents && !options.skip_probes {
        let worker = ProbeWorker::new(
            LivenessPolicy::of(config),
            Duration::from_secs(config.liveness.targets_sync_secs),
            store.clone(),
            writer.clone(),
        )?
        .rescoring(contexts.clone());
        Some(worker.run_lowered(keeper_stop))
    } else {
        None
    };
    let mut result = Ok(());
    while let Some(joined) = followers.join_next().await {
        match joined {
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                tracing::error!(target: "agentindex::engine", %error, "chain follower stopped");
                if result.is_ok() {
                    result = Err(error.into());
                }
            }
            Err(panic) => std::panic::resume_unwind(panic.into_panic()),
        }
    }
    let _ = chains_done.send(true);
    let _ = stop_keeper.send(true);
    if let Err(join) = keeper.await
        && !join.is_cancelled()
    {
        std::panic::resume_unwind(join.into_panic());
    }
    if let Some(probes) = probes
        && let Err(join) = probes.await
        && !join.is_cancelled()
    {
        std::panic::resume_unwind(join.into_panic());
    }
    if let Some(worker) = documents {
        if result.is_err() {
            worker.abort();
        }
        match worker.await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                tracing::error!(target: "agentindex::engine", %error, "documents worker stopped");
                if result.is_ok() {
                    result = Err(error.into());
                }
            }
            Err(join) if join.is_cancelled() => {}
            Err(panic) => std::panic::resume_unwind(panic.into_panic()),
        }
    }
    drop(writer);
    store.close().await;
    result
}

/// Each configured chain's context (its identity registry and reputation rules), by chain id:
/// one per chain (EVM chains and Cardano networks), shared by its follower and the documents
/// worker.
pub fn chain_contexts(config: &Config) -> ChainContexts {
    config
        .chains
        .iter()
        .map(|chain| {
            let context = ChainContext {
                chain_id: chain.chain_id,
                name: chain.name.clone(),
                identity: chain.erc8004.as_ref().and_then(|e| e.identity),
                rules: Arc::new(ReputationRules::of_chain(chain, &config.reputation)),
                funding_lookback: chain.funding_lookback_blocks,
                ranks_ahead: Default::default(),
            };
            (chain.chain_id, Arc::new(context))
        })
        .chain(config.cardano.iter().map(|network| {
            let context = ChainContext {
                chain_id: network.chain_id(),
                name: network.name(),
                identity: None,
                rules: Arc::new(ReputationRules::of_cardano(
                    network.network,
                    &config.reputation,
                )),
                funding_lookback: 0,
                ranks_ahead: Default::default(),
            };
            (network.chain_id(), Arc::new(context))
        }))
        .collect()
}
