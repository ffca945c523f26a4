//! What the funding lookback already read, so that a payer seen again is not read again: for
//! each account, the blocks whose inflows are held and those inflows. A payer that pays in
//! range after range costs one lookback, then only the blocks since it was last read. Forgotten
//! whole on a reorg (what it holds may be gone from the chain) and when it outgrows its bound;
//! what lies before every window still to come is let go as the chain moves on, so an account
//! paying every block does not hold every inflow it ever had.

use crate::reputation::funding_trail::{Inflow, Move};
use alloy::primitives::Address;
use std::collections::{BTreeMap, HashMap};

/// Inflows held at most; past this the cache starts afresh.
const MAX_INFLOWS: usize = 200_000;
/// Accounts held at most.
const MAX_ACCOUNTS: usize = 200_000;

/// One account's held inflows: every inflow in blocks `from..=to`.
#[derive(Debug)]
struct Held {
    from: u64,
    to: u64,
    inflows: BTreeMap<(u64, u64), Inflow>,
}

/// The inflows read so far, by account.
#[derive(Debug, Default)]
pub(super) struct FundingCache {
    accounts: HashMap<Address, Held>,
    inflows: usize,
    /// The block before which everything was last let go ([`FundingCache::forget_before`]).
    kept_from: u64,
}

/// What a set of moves still needs read: the accounts, and the blocks to read for them.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Missing {
    /// Accounts some of whose window is not held.
    pub(super) accounts: Vec<Address>,
    /// The first block to read for any of them.
    pub(super) from: u64,
    /// The last block to read.
    pub(super) to: u64,
}

impl FundingCache {
    /// Forgets everything (after a reorg).
    pub(super) fn forget(&mut self) {
        *self = Self::default();
    }

    /// Lets go of every inflow before `block`, which no window still to come reaches (each
    /// account then holds from `block` on). Done only once `block` has moved `every` blocks
    /// past where it was last done, so the accounts are walked now and then, not every batch.
    pub(super) fn forget_before(&mut self, block: u64, every: u64) {
        if block < self.kept_from.saturating_add(every.max(1)) {
            return;
        }
        self.kept_from = block;
        let mut dropped = 0;
        self.accounts.retain(|_, held| {
            if held.to < block {
                dropped += held.inflows.len();
                return false;
            }
            if held.from < block {
                let kept = held.inflows.split_off(&(block, 0));
                dropped += held.inflows.len();
                held.inflows = kept;
                held.from = block;
            }
            true
        });
        self.inflows -= dropped;
    }

    /// What `moves` need read, `lookback` blocks before each, beyond what is held.
    pub(super) fn missing(&self, moves: &[Move], lookback: u64) -> Missing {
        let mut need: BTreeMap<Address, (u64, u64)> = BTreeMap::new();
        for m in moves {
            let entry = need
                .entry(m.account)
                .or_insert((m.block.saturating_sub(lookback), m.block));
            entry.0 = entry.0.min(m.block.saturating_sub(lookback));
            entry.1 = entry.1.max(m.block);
        }
        let mut missing = Missing {
            from: u64::MAX,
            ..Missing::default()
        };
        for (account, (from, to)) in need {
            let read_from = match self.accounts.get(&account) {
                Some(held) if held.from <= from && held.to >= to => continue,
                // Held from early enough: only what came after.
                Some(held) if held.from <= from && held.to.saturating_add(1) >= from => held.to + 1,
                _ => from,
            };
            missing.accounts.push(account);
            missing.from = missing.from.min(read_from);
            missing.to = missing.to.max(to);
        }
        if missing.accounts.is_empty() {
            missing.from = 0;
        }
        missing
    }

    /// Holds `read`, every inflow of `missing.accounts` in `missing.from..=missing.to`.
    pub(super) fn hold(&mut self, missing: &Missing, read: &[Inflow]) {
        if self.inflows + read.len() > MAX_INFLOWS
            || self.accounts.len() + missing.accounts.len() > MAX_ACCOUNTS
        {
            self.forget();
        }
        for account in &missing.accounts {
            let held = self.accounts.entry(*account).or_insert_with(|| Held {
                from: missing.from,
                to: missing.to,
                inflows: BTreeMap::new(),
            });
            let touches = missing.from <= held.to.saturating_add(1) && held.from <= missing.to;
            if touches {
                held.from = held.from.min(missing.from);
                held.to = held.to.max(missing.to);
            } else {
                self.inflows -= held.inflows.len();
                *held = Held {
                    from: missing.from,
                    to: missing.to,
                    inflows: BTreeMap::new(),
                };
            }
        }
        for inflow in read {
            if let Some(held) = self.accounts.get_mut(&inflow.funded)
                && held
                    .inflows
                    .insert(inflow.position(), inflow.clone())
                    .is_none()
            {
                self.inflows += 1;
            }
        }
    }

    /// Every held inflow of the accounts of `moves` within their windows.
    pub(super) fn inflows_for(&self, moves: &[Move], lookback: u64) -> Vec<Inflow> {
        let mut out: BTreeMap<(u64, u64), Inflow> = BTreeMap::new();
        for m in moves {
            let Some(held) = self.accounts.get(&m.account) else {
                continue;
            };
            let first = (m.block.saturating_sub(lookback), 0);
            for (position, inflow) in held.inflows.range(first..(m.block, m.log_index)) {
                out.insert(*position, inflow.clone());
            }
        }
        out.into_values().collect()
    }
}

#[cfg(test)]
#[path = "funding_cache_tests.rs"]
mod tests;
