//! What the logs of a range bring into view: agent contracts (factory children, enrolments) and
//! payment addresses (agentWallet changes) first seen in it, and which logs of an agent contract
//! count (those from the block it became known).

use super::fetched::FetchedRange;
use super::sources::SourceMap;
use crate::sources::{Decoded, RegistryAction, Role};
use crate::store::WatchedSets;
use alloy::primitives::Address;
use alloy::rpc::types::Log;
use std::collections::BTreeMap;

/// What a log brought into view.
pub(super) enum Discovery {
    Agent,
    Payee,
}

/// Agent contracts and payment addresses that logs bring into view, with the block they do.
pub(super) fn discoveries<'a>(
    logs: impl Iterator<Item = &'a Log>,
    sources: &SourceMap,
) -> Vec<(Address, u64, Discovery)> {
    let mut found = Vec::new();
    for log in logs {
        let Some(block) = log.block_number else {
            continue;
        };
        let (role, decoded) = sources.decode(log, false);
        match (role, decoded) {
            (Role::Factory, Ok(Decoded::AgentCreated { agent, .. })) => {
                found.push((agent, block, Discovery::Agent))
            }
            (
                Role::Registry,
                Ok(Decoded::Registry {
                    agent,
                    action: RegistryAction::Registered { .. },
                    ..
                }),
            ) => found.push((agent, block, Discovery::Agent)),
            (Role::Identity, Ok(Decoded::MetadataSet { key, value, .. }))
                if key == "agentWallet" =>
            {
                if let Some(wallet) = crate::agents::wallet_from_metadata(&value) {
                    found.push((wallet, block, Discovery::Payee));
                }
            }
            _ => {}
        }
    }
    found
}

pub(super) fn consider_payee(
    payees: &mut BTreeMap<Address, u64>,
    watched: &WatchedSets,
    out: &FetchedRange,
    address: Address,
    block: u64,
) {
    let covered = watched
        .payment_addresses
        .get(&address)
        .is_some_and(|f| *f <= block)
        || out
            .new_payment_addresses
            .get(&address)
            .is_some_and(|f| *f <= block);
    if !covered {
        let entry = payees.entry(address).or_insert(block);
        *entry = (*entry).min(block);
    }
}

/// Keeps a log unless it is an agent contract's from before the block the agent became known.
pub(super) fn keep_log(
    kept: &mut BTreeMap<(u64, u64), Log>,
    log: Log,
    watched: &WatchedSets,
    new_agents: &BTreeMap<Address, u64>,
    sources: &SourceMap,
) {
    let address = log.inner.address;
    if sources.roles(&address).is_none() {
        let from = match (watched.agents.get(&address), new_agents.get(&address)) {
            (Some(a), Some(b)) => Some(*a.min(b)),
            (a, b) => a.or(b).copied(),
        };
        if from.is_none_or(|f| log.block_number.unwrap_or(0) < f) {
            return;
        }
    }
    insert(kept, log);
}

pub(super) fn insert(kept: &mut BTreeMap<(u64, u64), Log>, log: Log) {
    if let (Some(block), Some(index)) = (log.block_number, log.log_index) {
        kept.insert((block, index), log);
    }
}
