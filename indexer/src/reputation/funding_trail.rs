//! Which funding transfers are kept: the trail of money into the payers of agents, followed back
//! a few hops. A payment is a *move* of its payer; the token transfers into that payer in the
//! blocks just before it (a chain's `funding_lookback_blocks`) are the money it moved, and each of those is a move of its sender in
//! turn, up to [`HOPS`] transfers back from the payment.
//!
//! The follower uses this to know whose inflows to ask for next; the store uses it on what the
//! follower brought, with the payments it credited, to keep exactly the transfers a trail
//! reaches. Both see a window that is complete (every inflow of the account in the blocks before
//! the move), so what is kept is a function of the chain, however ranges were cut: each
//! transfer is kept with the first payment whose trail reaches it (`paid_block`), and a reorg
//! that removes that payment removes the transfer.

use alloy::primitives::{Address, U256};
use std::collections::{BTreeMap, HashMap};

/// Transfers followed back from a payment at most.
pub const HOPS: usize = 3;
/// The largest inflows kept per move: a fresh puppet has one or two, a busy account many.
pub const INFLOWS_PER_MOVE: usize = 32;
/// An account with more inflows than this in one window is busy (an exchange's hot wallet, a
/// popular agent): its money has no one source, and none of those inflows are kept.
pub const BUSY_INFLOWS: usize = 256;

/// Money moving on: a payment by `account`, or a transfer it sent that a trail reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Move {
    /// Who moved the money.
    pub account: Address,
    /// The move's block.
    pub block: u64,
    /// The move's log index in its block.
    pub log_index: u64,
    /// The block of the payment the trail began at.
    pub paid_block: u64,
}

/// A token transfer into an account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inflow {
    /// The token.
    pub token: Address,
    /// Who sent it.
    pub funder: Address,
    /// Who received it.
    pub funded: Address,
    /// Amount, in the token's units.
    pub amount: U256,
    /// Its block.
    pub block: u64,
    /// Its log index in its block.
    pub log_index: u64,
}

impl Inflow {
    /// Where it lies on the chain.
    pub fn position(&self) -> (u64, u64) {
        (self.block, self.log_index)
    }
}

/// One round of the trail: the inflows that each of `moves` moved on (into its account, within
/// `lookback` blocks before it, the [`INFLOWS_PER_MOVE`] largest, none for a busy account),
/// each with the earliest `paid_block` of the moves that reached it, by position.
pub fn moved_on(
    moves: &[Move],
    inflows: &[Inflow],
    lookback: u64,
) -> BTreeMap<(u64, u64), (usize, u64)> {
    let mut into: HashMap<Address, Vec<usize>> = HashMap::new();
    for (i, inflow) in inflows.iter().enumerate() {
        if inflow.funder != Address::ZERO && inflow.funder != inflow.funded {
            into.entry(inflow.funded).or_default().push(i);
        }
    }
    for list in into.values_mut() {
        list.sort_by_key(|i| inflows[*i].position());
        list.dedup_by_key(|i| inflows[*i].position());
    }
    let mut reached: BTreeMap<(u64, u64), (usize, u64)> = BTreeMap::new();
    for m in moves {
        let Some(list) = into.get(&m.account) else {
            continue;
        };
        let first = m.block.saturating_sub(lookback);
        let start = list.partition_point(|i| inflows[*i].block < first);
        let end = list.partition_point(|i| inflows[*i].position() < (m.block, m.log_index));
        let window = &list[start..end.max(start)];
        if window.len() > BUSY_INFLOWS {
            continue;
        }
        let mut largest: Vec<usize> = window.to_vec();
        largest.sort_by(|a, b| {
            let (a, b) = (&inflows[*a], &inflows[*b]);
            b.amount
                .cmp(&a.amount)
                .then(a.position().cmp(&b.position()))
        });
        largest.truncate(INFLOWS_PER_MOVE);
        for i in largest {
            let entry = reached
                .entry(inflows[i].position())
                .or_insert((i, m.paid_block));
            entry.1 = entry.1.min(m.paid_block);
        }
    }
    reached
}

/// The moves the inflows `reached` (as [`moved_on`] gives them, indexes into `inflows`) make of
/// their senders: the next round of the trail.
pub fn next_moves(reached: &BTreeMap<(u64, u64), (usize, u64)>, inflows: &[Inflow]) -> Vec<Move> {
    reached
        .values()
        .map(|(i, paid_block)| Move {
            account: inflows[*i].funder,
            block: inflows[*i].block,
            log_index: inflows[*i].log_index,
            paid_block: *paid_block,
        })
        .collect()
}

/// The whole trail from `payments` through `inflows` with `lookback` blocks per move: every
/// inflow reached within [`HOPS`] rounds, by position, with its index in `inflows` and the
/// earliest payment block whose trail reaches it.
pub fn trail(
    payments: &[Move],
    inflows: &[Inflow],
    lookback: u64,
) -> BTreeMap<(u64, u64), (usize, u64)> {
    let mut kept: BTreeMap<(u64, u64), (usize, u64)> = BTreeMap::new();
    let mut moves: Vec<Move> = payments.to_vec();
    for _ in 0..HOPS {
        if moves.is_empty() {
            break;
        }
        let reached = moved_on(&moves, inflows, lookback);
        moves = next_moves(&reached, inflows);
        for (position, (i, paid_block)) in reached {
            let entry = kept.entry(position).or_insert((i, paid_block));
            entry.1 = entry.1.min(paid_block);
        }
    }
    kept
}

#[cfg(test)]
#[path = "funding_trail_tests.rs"]
mod tests;
