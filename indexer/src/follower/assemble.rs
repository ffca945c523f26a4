//! Turns fetched logs into the writer's [`EventRecord`]s: role, decoding, settlement pairing,
//! block timestamps (from the logs when the node gives them, else from block headers) and the
//! state of agent contracts at their registry enrolments.

use super::fetched::FetchedRange;
use super::snapshot;
use super::sources::SourceMap;
use crate::primitives::BlockRef;
use crate::rpc::{ChainRpc, RpcError};
use crate::sources::{Decoded, RegistryAction};
use crate::store::EventRecord;
use alloy::eips::BlockNumberOrTag;
use alloy::rpc::types::Log;
use std::collections::{BTreeMap, BTreeSet};

/// Why a fetched log could not be placed on the chain.
#[derive(Debug, thiserror::Error)]
pub enum AssembleError {
    /// The node returned a log without block number, index, hashes (a pending log).
    #[error("log from {address} lacks its {missing}")]
    Incomplete {
        /// Emitter.
        address: String,
        /// Which field.
        missing: &'static str,
    },
    /// A header needed for a timestamp could not be fetched.
    #[error(transparent)]
    Rpc(#[from] RpcError),
    /// The header of a block the logs name is gone: the chain moved under us.
    #[error("block {0} disappeared while fetching its timestamp")]
    BlockGone(u64),
}

/// Builds the records of `fetched`, in chain order.
pub(super) async fn records(
    rpc: &ChainRpc,
    sources: &SourceMap,
    fetched: FetchedRange,
    headers: &[BlockRef],
) -> Result<Vec<EventRecord>, AssembleError> {
    let mut timestamps: BTreeMap<u64, u64> =
        headers.iter().map(|h| (h.number, h.timestamp)).collect();
    for log in fetched.logs.iter().chain(&fetched.payments) {
        if let (Some(block), Some(ts)) = (log.block_number, log.block_timestamp) {
            timestamps.insert(block, ts);
        }
    }
    let missing: BTreeSet<u64> = fetched
        .logs
        .iter()
        .chain(&fetched.payments)
        .filter_map(|l| l.block_number)
        .filter(|b| !timestamps.contains_key(b))
        .collect();
    // Every missing header at once; the RPC layer bounds how many are in flight.
    let headers = futures::future::try_join_all(
        missing
            .iter()
            .map(|block| rpc.header(BlockNumberOrTag::Number(*block))),
    )
    .await?;
    for (block, header) in missing.into_iter().zip(headers) {
        let header = header.ok_or(AssembleError::BlockGone(block))?;
        timestamps.insert(block, header.timestamp);
    }

    let mut records = Vec::with_capacity(fetched.logs.len() + fetched.payments.len());
    for (log, is_token) in fetched
        .logs
        .into_iter()
        .map(|l| (l, false))
        .chain(fetched.payments.into_iter().map(|l| (l, true)))
    {
        let (role, decoded) = sources.decode(&log, is_token);
        let block_number = need(&log, log.block_number, "block number")?;
        let log_index = need(&log, log.log_index, "log index")?;
        let topics = log.inner.data.topics();
        records.push(EventRecord {
            block_number,
            log_index,
            block_hash: need(&log, log.block_hash, "block hash")?,
            block_timestamp: timestamps[&block_number],
            tx_hash: need(&log, log.transaction_hash, "transaction hash")?,
            address: log.inner.address,
            role,
            topic0: topics.first().copied(),
            topics: topics.iter().skip(1).copied().collect(),
            data: log.inner.data.data.clone(),
            decoded,
            settlement: fetched.settlements.get(&(block_number, log_index)).copied(),
            snapshot: None,
        });
    }
    for record in &mut records {
        if let Ok(Decoded::Registry {
            agent,
            action: RegistryAction::Registered { .. },
            ..
        }) = &record.decoded
        {
            record.snapshot = Some(snapshot::read(rpc, *agent, record.block_hash).await?);
        }
    }
    records.sort_by_key(|r| (r.block_number, r.log_index));
    records.dedup_by_key(|r| (r.block_number, r.log_index));
    Ok(records)
}

fn need<T>(log: &Log, value: Option<T>, missing: &'static str) -> Result<T, AssembleError> {
    value.ok_or_else(|| AssembleError::Incomplete {
        address: format!("{:#x}", log.inner.address),
        missing,
    })
}
