//! What fetching a range brings: its logs and payments in chain order, how x402 settled the
//! payments, and the agent contracts and payment addresses first seen in it; and how a range too
//! dense for one batch is cut to the whole blocks that fit.

use crate::reputation::funding_trail::Inflow;
use crate::sources::payments::Settlement;
use alloy::primitives::Address;
use alloy::rpc::types::Log;
use std::collections::{BTreeMap, HashMap};

/// Everything fetched for one range.
#[derive(Debug, Default)]
pub(super) struct FetchedRange {
    /// Logs of configured contracts and agent contracts, in chain order, deduplicated.
    pub logs: Vec<Log>,
    /// Token `Transfer`s into payment addresses, in chain order.
    pub payments: Vec<Log>,
    /// How x402 settled each payment it settled, by (block, log index).
    pub settlements: HashMap<(u64, u64), Settlement>,
    /// Agent contracts first seen in this range, with their first block.
    pub new_agents: BTreeMap<Address, u64>,
    /// Payment addresses first bound in this range, with their first block.
    pub new_payment_addresses: BTreeMap<Address, u64>,
    /// The payment tokens' transfers into the payers and their funders in the blocks before
    /// they moved the money on (`funding.rs`), some from before the range.
    pub funding: Vec<Inflow>,
}

impl FetchedRange {
    /// Logs held, payments included.
    pub(super) fn len(&self) -> usize {
        self.logs.len() + self.payments.len()
    }

    /// Keeps the longest run of whole blocks from the start that holds at most `max_logs` logs
    /// (at least the first block, however many it holds) and returns its last block; what lies
    /// beyond is dropped, to be fetched again with the next range.
    pub(super) fn keep_at_most(&mut self, max_logs: usize) -> Option<u64> {
        let mut per_block: BTreeMap<u64, usize> = BTreeMap::new();
        for block in self
            .logs
            .iter()
            .chain(&self.payments)
            .filter_map(|l| l.block_number)
        {
            *per_block.entry(block).or_default() += 1;
        }
        let mut kept = 0;
        let mut last = None;
        for (block, count) in per_block {
            if last.is_some() && kept + count > max_logs {
                break;
            }
            kept += count;
            last = Some(block);
        }
        let last = last?;
        let within = |log: &Log| log.block_number.is_some_and(|b| b <= last);
        self.logs.retain(within);
        self.payments.retain(within);
        self.settlements.retain(|(block, _), _| *block <= last);
        self.new_agents.retain(|_, block| *block <= last);
        self.new_payment_addresses.retain(|_, block| *block <= last);
        self.funding.retain(|inflow| inflow.block <= last);
        Some(last)
    }
}

#[cfg(test)]
#[path = "fetched_tests.rs"]
mod tests;
