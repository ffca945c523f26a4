//! The second step of fetching a range (see `fetch.rs`): its raw logs filtered by what is watched
//! when it is resolved, the agent contracts discovered since it was read, the payments of the
//! payment addresses bound by its end, then what it brings into view itself, round after round,
//! and the settlements of its payments. Each is a step of its own on a [`Resolution`].

use super::by_address::{Direction, both_directions, logs_of, transfer_side};
use super::discovery::{Discovery, consider_payee, discoveries, insert, keep_log};
use super::fetch::{RangeRequest, RawRange, known_agents};
use super::fetched::FetchedRange;
use super::funding;
use super::pairing;
use super::sources::SourceMap;
use super::strategy::{Observed, Way};
use crate::rpc::RpcError;
use crate::store::WatchedSets;
use alloy::primitives::Address;
use alloy::rpc::types::Log;
use std::collections::{BTreeMap, HashSet};

/// Rounds of discovery a range follows at most, each fetching what the one before brought into
/// view, so that resolving a range always ends.
const DISCOVERY_ROUNDS: usize = 9;

/// Payment addresses bound by block `to`.
fn bound_payees(watched: &WatchedSets, to: u64) -> Vec<Address> {
    watched
        .payment_addresses
        .iter()
        .filter(|(_, f)| **f <= to)
        .map(|(a, _)| *a)
        .collect()
}

/// The second step: filters the raw logs by what is watched now, fetches
/// what the plan takes by address, follows discoveries and pairs settlements.
pub(super) async fn resolve(
    request: &RangeRequest<'_>,
    from: u64,
    to: u64,
    raw: RawRange,
) -> Result<(FetchedRange, Observed), RpcError> {
    let RawRange {
        mut contract_logs,
        agents_read,
        agent_pool,
        token_pool,
        observed,
    } = raw;
    let mut range = Resolution {
        request,
        from,
        to,
        agent_pool,
        token_pool,
        kept: Kept::default(),
    };
    contract_logs.extend(range.agents_found_since_read(&agents_read).await?);
    range.keep_contract_logs(contract_logs).await?;
    range.keep_payments().await?;
    range.follow_discoveries().await?;
    Ok((range.finish().await?, observed))
}

/// A range being resolved: what it was read with, and what it keeps so far.
struct Resolution<'r, 'a> {
    request: &'r RangeRequest<'a>,
    from: u64,
    to: u64,
    /// The agent scan's logs, when agents are scanned and the provider answered.
    agent_pool: Option<Vec<Log>>,
    /// The token scan's logs, when payments are scanned and the provider answered.
    token_pool: Option<Vec<Log>>,
    kept: Kept,
}

/// What a range keeps while it is resolved, each log by its position on the chain (block, log
/// index), so that a log found twice is kept once.
#[derive(Default)]
struct Kept {
    /// Logs of configured contracts and agent contracts.
    logs: BTreeMap<(u64, u64), Log>,
    /// Token transfers into and out of payment addresses.
    payments: BTreeMap<(u64, u64), Log>,
    /// The agent contracts and payment addresses discovered so far; its logs are filled in
    /// at the end.
    fetched: FetchedRange,
}

impl Kept {
    /// Keeps `log` unless it is an agent contract's from before the agent became known.
    fn log(&mut self, log: Log, watched: &WatchedSets, sources: &SourceMap) {
        keep_log(
            &mut self.logs,
            log,
            watched,
            &self.fetched.new_agents,
            sources,
        );
    }
}

impl Resolution<'_, '_> {
    /// Logs of the agent contracts that earlier ranges discovered after this one was read (when
    /// agents are fetched by address).
    async fn agents_found_since_read(
        &self,
        agents_read: &HashSet<Address>,
    ) -> Result<Vec<Log>, RpcError> {
        if self.request.plan.agents != Way::Addresses {
            return Ok(Vec::new());
        }
        let unread: Vec<Address> = known_agents(self.request.watched, self.to)
            .into_iter()
            .filter(|agent| !agents_read.contains(agent))
            .collect();
        logs_of(self.request.rpc, &unread, self.from, self.to).await
    }

    /// Keeps the configured contracts' logs and the agent contracts': read by address, taken
    /// from the agent scan, or asked for by address when the scan found no answer.
    async fn keep_contract_logs(&mut self, contract_logs: Vec<Log>) -> Result<(), RpcError> {
        let RangeRequest {
            rpc,
            sources,
            watched,
            plan,
            ..
        } = *self.request;
        for log in contract_logs {
            self.kept.log(log, watched, sources);
        }
        match &self.agent_pool {
            Some(pool) => {
                // Configured contracts that share an event with agents (an `OwnershipTransferred`)
                // come from their own request, from their own start block, not from the scan.
                for log in pool
                    .iter()
                    .filter(|l| sources.roles(&l.inner.address).is_none())
                {
                    self.kept.log(log.clone(), watched, sources);
                }
            }
            // A scan the provider could not answer even block by block: by address after all.
            None if plan.agents == Way::Scan => {
                let agents = known_agents(watched, self.to);
                for log in logs_of(rpc, &agents, self.from, self.to).await? {
                    self.kept.log(log, watched, sources);
                }
            }
            None => {}
        }
        Ok(())
    }

    /// Keeps the token transfers into and out of the payment addresses bound by the range's end:
    /// taken from the token scan, or asked for by address.
    async fn keep_payments(&mut self) -> Result<(), RpcError> {
        let RangeRequest {
            rpc,
            sources,
            watched,
            payment_chunk,
            ..
        } = *self.request;
        let payees = bound_payees(watched, self.to);
        match &self.token_pool {
            Some(pool) => {
                let payees: HashSet<Address> = payees.iter().copied().collect();
                for log in pool {
                    let involves = |direction: Direction| {
                        transfer_side(log, direction).is_some_and(|side| payees.contains(&side))
                    };
                    if involves(Direction::Into) || involves(Direction::OutOf) {
                        insert(&mut self.kept.payments, log.clone());
                    }
                }
            }
            None => {
                let (from, to) = (self.from, self.to);
                for log in
                    both_directions(rpc, &sources.tokens, &payees, payment_chunk, from, to).await?
                {
                    insert(&mut self.kept.payments, log);
                }
            }
        }
        Ok(())
    }

    /// Discoveries inside the range (agent contracts, payment addresses), taken from the scans
    /// or fetched from their block on, until a round finds none that are new.
    async fn follow_discoveries(&mut self) -> Result<(), RpcError> {
        for _ in 0..DISCOVERY_ROUNDS {
            let (agents, payees) = self.newly_in_view();
            if agents.is_empty() && payees.is_empty() {
                break;
            }
            // One request for all new agents and one for all new payees, from the earliest
            // discovery on; logs from before an agent's own discovery are dropped by keep_log.
            self.add_agents(&agents).await?;
            self.add_payees(&payees).await?;
        }
        Ok(())
    }

    /// The agent contracts and payment addresses the kept logs bring into view earlier than
    /// they are watched from, each with the block it comes into view.
    fn newly_in_view(&self) -> (BTreeMap<Address, u64>, BTreeMap<Address, u64>) {
        let RangeRequest {
            sources, watched, ..
        } = *self.request;
        let discovered = &self.kept.fetched;
        let mut agents: BTreeMap<Address, u64> = BTreeMap::new();
        let mut payees: BTreeMap<Address, u64> = BTreeMap::new();
        for (address, block, kind) in discoveries(self.kept.logs.values(), sources) {
            match kind {
                Discovery::Agent => {
                    if watched.agents.get(&address).is_none_or(|f| *f > block)
                        && discovered
                            .new_agents
                            .get(&address)
                            .is_none_or(|f| *f > block)
                    {
                        agents.insert(address, block);
                    }
                    consider_payee(&mut payees, watched, discovered, address, block);
                }
                Discovery::Payee => {
                    consider_payee(&mut payees, watched, discovered, address, block)
                }
            }
        }
        (agents, payees)
    }

    /// Watches `agents` from their discovery and keeps their logs: from the agent scan, or in
    /// one request from the earliest discovery to the range's end.
    async fn add_agents(&mut self, agents: &BTreeMap<Address, u64>) -> Result<(), RpcError> {
        let Some(first) = agents.values().min().copied() else {
            return Ok(());
        };
        let RangeRequest {
            rpc,
            sources,
            watched,
            ..
        } = *self.request;
        self.kept
            .fetched
            .new_agents
            .extend(agents.iter().map(|(a, b)| (*a, *b)));
        let found: Vec<Log> = match &self.agent_pool {
            Some(pool) => pool
                .iter()
                .filter(|log| agents.contains_key(&log.inner.address))
                .cloned()
                .collect(),
            None => {
                let addresses: Vec<Address> = agents.keys().copied().collect();
                logs_of(rpc, &addresses, first, self.to).await?
            }
        };
        for log in found {
            self.kept.log(log, watched, sources);
        }
        Ok(())
    }

    /// Watches `payees` from their discovery and keeps the transfers into and out of them from
    /// the block each is bound: from the token scan, or asked for by address from the earliest
    /// discovery to the range's end.
    async fn add_payees(&mut self, payees: &BTreeMap<Address, u64>) -> Result<(), RpcError> {
        let Some(first) = payees.values().min().copied() else {
            return Ok(());
        };
        let RangeRequest {
            rpc,
            sources,
            watched,
            payment_chunk,
            ..
        } = *self.request;
        self.kept
            .fetched
            .new_payment_addresses
            .extend(payees.iter().map(|(a, b)| (*a, *b)));
        let bound = &self.kept.fetched.new_payment_addresses;
        let counts = |log: &Log| {
            let block = log.block_number.unwrap_or(0);
            [Direction::Into, Direction::OutOf]
                .into_iter()
                .any(|direction| {
                    transfer_side(log, direction)
                        .filter(|side| payees.contains_key(side))
                        .and_then(|side| {
                            [watched.payment_addresses.get(&side), bound.get(&side)]
                                .into_iter()
                                .flatten()
                                .min()
                                .copied()
                        })
                        .is_some_and(|bound_from| block >= bound_from)
                })
        };
        let found: Vec<Log> = match &self.token_pool {
            Some(pool) => pool.iter().filter(|log| counts(log)).cloned().collect(),
            None => {
                let addresses: Vec<Address> = payees.keys().copied().collect();
                both_directions(
                    rpc,
                    &sources.tokens,
                    &addresses,
                    payment_chunk,
                    first,
                    self.to,
                )
                .await?
                .into_iter()
                .filter(|log| counts(log))
                .collect()
            }
        };
        for log in found {
            insert(&mut self.kept.payments, log);
        }
        Ok(())
    }

    /// Pairs the payments with the x402 settlements that made them, and hands back the range in
    /// chain order.
    async fn finish(self) -> Result<FetchedRange, RpcError> {
        let Resolution {
            request,
            token_pool,
            kept,
            ..
        } = self;
        let Kept {
            logs,
            payments,
            fetched: mut range,
        } = kept;
        range.settlements = pairing::settlements(
            request.rpc,
            request.sources,
            token_pool.as_deref(),
            &payments,
        )
        .await?;
        let mut payees: std::collections::BTreeSet<Address> =
            request.watched.payment_addresses.keys().copied().collect();
        payees.extend(range.new_payment_addresses.keys().copied());
        range.funding = funding::trail_inflows(
            request.rpc,
            &request.sources.tokens,
            request.payment_chunk,
            request.funding,
            funding::payer_moves(payments.values(), &payees),
        )
        .await?;
        range.logs = logs.into_values().collect();
        range.payments = payments.into_values().collect();
        Ok(range)
    }
}
