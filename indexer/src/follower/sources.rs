//! Which addresses the follower fetches logs from, and what each is.

use crate::config::ChainConfig;
use crate::sources::{self, DecodeError, Decoded, Role};
use alloy::primitives::Address;
use alloy::rpc::types::Log;
use std::collections::BTreeMap;

/// The configured contracts of one chain and their roles. One address may hold several roles
/// (a test double that emits every legacy shape, for instance).
#[derive(Debug, Clone, Default)]
pub struct SourceMap {
    roles: BTreeMap<Address, Vec<Role>>,
    /// Payment tokens.
    pub tokens: Vec<Address>,
    /// x402 Permit2 proxies, each with whether it is the `upto` one.
    pub proxies: Vec<(Address, bool)>,
    /// First block each configured contract is read from.
    pub start: BTreeMap<Address, u64>,
}

impl SourceMap {
    /// The contracts `chain` configures.
    pub fn from_config(chain: &ChainConfig) -> Self {
        let mut map = SourceMap::default();
        // An unresolved "deployment" start is found before the map is built for indexing.
        let chain_start = chain.start_block.known().unwrap_or(0);
        let mut add = |address: Address, role: Role, start: u64| {
            let roles = map.roles.entry(address).or_default();
            if !roles.contains(&role) {
                roles.push(role);
            }
            let entry = map.start.entry(address).or_insert(start);
            *entry = (*entry).min(start);
        };
        for factory in &chain.factories {
            add(
                factory.address,
                Role::Factory,
                factory.start_block.unwrap_or(chain_start),
            );
        }
        for registry in &chain.registries {
            add(
                registry.address,
                Role::Registry,
                registry.start_block.unwrap_or(chain_start),
            );
        }
        if let Some(erc8004) = &chain.erc8004 {
            for (address, role) in [
                (erc8004.identity, Role::Identity),
                (erc8004.reputation, Role::Reputation),
                (erc8004.validation, Role::Validation),
            ] {
                if let Some(address) = address {
                    add(address, role, chain_start);
                }
            }
        }
        if let Some(batch) = chain.x402.batch_settlement() {
            add(batch, Role::BatchSettlement, chain_start);
        }
        map.tokens = chain.payment_tokens.iter().map(|t| t.address).collect();
        map.proxies = chain.x402.permit2_proxies();
        map
    }

    /// Configured contracts (not tokens) whose logs matter at or before `block`.
    pub fn contracts_active_by(&self, block: u64) -> Vec<Address> {
        self.roles
            .keys()
            .filter(|a| self.start.get(*a).is_some_and(|s| *s <= block))
            .copied()
            .collect()
    }

    /// The roles of a configured contract.
    pub fn roles(&self, address: &Address) -> Option<&[Role]> {
        self.roles.get(address).map(Vec::as_slice)
    }

    /// Decodes a log from `address`, trying each of its roles (agents when not configured).
    pub fn decode(&self, log: &Log, is_token: bool) -> (Role, Result<Decoded, DecodeError>) {
        if is_token {
            return (Role::Token, sources::decode(Role::Token, log));
        }
        let roles = self.roles(&log.inner.address).unwrap_or(&[Role::Agent]);
        let mut first = None;
        for role in roles {
            let result = sources::decode(*role, log);
            if !matches!(result, Err(DecodeError::UnknownEvent { .. })) {
                return (*role, result);
            }
            first.get_or_insert((*role, result));
        }
        first.unwrap_or((Role::Agent, Err(DecodeError::NoTopic)))
    }
}
