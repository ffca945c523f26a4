//! Who really pays: payers grouped into funding clusters by where their money came from.
//!
//! A funding edge is a token transfer into a payer (or into an account that went on to fund
//! one) shortly before the money moved on. Accounts joined by funding edges are one cluster, so
//! sixteen fresh wallets filled by one account in the block before they pay are one payer to
//! the trust rank, not sixteen (issue #32's puppet ring). A funder that fills many accounts
//! within one window (an exchange, a bridge, a faucet, payroll, and the mint itself, the zero
//! address) is a hub: its edges join nothing, so customers of one exchange keep their own
//! standing. A hub is still its customers' source of money: an agent paid only by payers of one
//! source is not broadly paid (see `trust_rank`), so a ring funded all at once, fifty wallets
//! or more, gains nothing by passing for a hub.
//!
//! Pure and deterministic: accounts are numbered in address order, every union keeps the
//! smaller number as the root, and the result does not depend on the order of the edges.

use alloy::primitives::{Address, U256};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// One funding transfer: `funder` sent `amount` of `token` to `funded` at `block`, and
/// `funded` moved money on (paid an agent, or funded another account) at `next_block`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FundingEdge {
    /// Who sent the money.
    pub funder: Address,
    /// Who received it.
    pub funded: Address,
    /// The transfer's block.
    pub block: u64,
    /// The transfer's log index in its block.
    pub log_index: u64,
    /// The block of the nearest payment or funding transfer by `funded` after it.
    pub next_block: u64,
    /// The token moved.
    pub token: Address,
    /// The amount moved, in the token's units.
    pub amount: U256,
}

/// How funding edges join payers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FundingParams {
    /// The most blocks between a funding transfer and the funded account moving the money on
    /// for the transfer to join them, and the window a hub's fan-out is counted in.
    pub window_blocks: u64,
    /// Distinct accounts funded within one window that make a funder a hub.
    pub hub_fanout: usize,
}

impl Default for FundingParams {
    fn default() -> Self {
        Self {
            window_blocks: 1_000,
            hub_fanout: 50,
        }
    }
}

/// Why a payer counts as part of a cluster: the account that funded it, how many payers share
/// that money, and the block the funding began.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PayerCluster {
    /// The account at the cluster's root: the one that funded most of its accounts.
    pub funder: Address,
    /// Payers in the cluster.
    pub size: u64,
    /// The block of that funder's first funding transfer in the cluster.
    pub block: u64,
}

/// The funding clusters of a set of payers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PayerClusters {
    /// Each clustered payer's representative: the smallest payer address of its cluster.
    /// Payers in no cluster of two or more are not listed.
    pub of: BTreeMap<Address, Address>,
    /// Each clustered payer's explanation.
    pub explained: BTreeMap<Address, PayerCluster>,
    /// The funders found to be hubs (the zero address always is).
    pub hubs: BTreeSet<Address>,
    /// Each payer in no cluster that a hub funded (the first such hub; the mint is no one's):
    /// its money's source, which payers of one agent must not all share for the agent to
    /// count as broadly paid. Funding fifty wallets at once makes their funder a hub, not a
    /// way out of this.
    pub sources: BTreeMap<Address, Address>,
}

impl PayerClusters {
    /// Whether no payer shares a cluster with another.
    pub fn is_empty(&self) -> bool {
        self.of.is_empty()
    }

    /// The cluster `payer` is in, if any.
    pub fn membership(&self, payer: &Address) -> Option<ClusterMembership> {
        Some(ClusterMembership {
            representative: *self.of.get(payer)?,
            cluster: self.explained.get(payer)?.clone(),
        })
    }
}

/// A payer's funding cluster: who stands for it (its smallest payer address) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterMembership {
    /// The cluster's smallest payer address.
    pub representative: Address,
    /// The funder, size and block of the cluster.
    pub cluster: PayerCluster,
}

/// `transfers` with each one's `next_block` set: the first block at or after it in which its
/// recipient paid (`paid`) or sent one of `transfers`; a transfer whose money never moved on
/// gets `u64::MAX` (it joins nothing).
pub fn with_next_moves(
    mut transfers: Vec<FundingEdge>,
    paid: &[(Address, u64)],
) -> Vec<FundingEdge> {
    // Only the moves of accounts some transfer funded matter.
    let mut moves: HashMap<Address, Vec<u64>> =
        transfers.iter().map(|t| (t.funded, Vec::new())).collect();
    let moved = paid
        .iter()
        .copied()
        .chain(transfers.iter().map(|t| (t.funder, t.block)));
    for (account, block) in moved {
        if let Some(blocks) = moves.get_mut(&account) {
            blocks.push(block);
        }
    }
    for blocks in moves.values_mut() {
        blocks.sort_unstable();
    }
    for transfer in &mut transfers {
        transfer.next_block = moves
            .get(&transfer.funded)
            .and_then(|blocks| {
                let at = blocks.partition_point(|b| *b < transfer.block);
                blocks.get(at).copied()
            })
            .unwrap_or(u64::MAX);
    }
    transfers
}

/// Groups `payers` into funding clusters by `edges` under `params`; `is_dust(token, amount)`
/// says which transfers are too small to tie accounts together.
pub fn payer_clusters(
    edges: &[FundingEdge],
    payers: &BTreeSet<Address>,
    is_dust: impl Fn(&Address, U256) -> bool,
    params: &FundingParams,
) -> PayerClusters {
    let mut kept: Vec<&FundingEdge> = edges
        .iter()
        .filter(|e| e.funder != e.funded)
        .filter(|e| e.next_block >= e.block && e.next_block - e.block <= params.window_blocks)
        .filter(|e| !is_dust(&e.token, e.amount))
        .collect();
    kept.sort_by_key(|e| (e.block, e.log_index, e.funder, e.funded));
    let hubs = hubs(&kept, params);
    let mut hub_funded: BTreeMap<Address, Address> = BTreeMap::new();
    for edge in &kept {
        let from_hub = edge.funder != Address::ZERO && hubs.contains(&edge.funder);
        if from_hub && payers.contains(&edge.funded) {
            hub_funded.entry(edge.funded).or_insert(edge.funder);
        }
    }
    let joining: Vec<&FundingEdge> = kept
        .into_iter()
        .filter(|e| !hubs.contains(&e.funder))
        .collect();

    // Number every account an edge joins, in address order.
    let accounts: Vec<Address> = joining
        .iter()
        .flat_map(|e| [e.funder, e.funded])
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let number: HashMap<Address, usize> =
        accounts.iter().enumerate().map(|(i, a)| (*a, i)).collect();
    let mut roots = Roots::new(accounts.len());
    for edge in &joining {
        roots.join(number[&edge.funder], number[&edge.funded]);
    }

    // Each component's payers, smallest address first (accounts are in address order).
    let mut members: BTreeMap<usize, Vec<Address>> = BTreeMap::new();
    for (i, account) in accounts.iter().enumerate() {
        if payers.contains(account) {
            members.entry(roots.root(i)).or_default().push(*account);
        }
    }
    let mut clusters = PayerClusters {
        hubs,
        ..PayerClusters::default()
    };
    members.retain(|_, payers_in| payers_in.len() >= 2);
    let explained = explain(&joining, &number, &mut roots, &members);
    for (root, payers_in) in members {
        let cluster = PayerCluster {
            size: payers_in.len() as u64,
            ..explained[&root].clone()
        };
        let representative = payers_in[0];
        for payer in payers_in {
            clusters.of.insert(payer, representative);
            clusters.explained.insert(payer, cluster.clone());
        }
    }
    clusters.sources = hub_funded
        .into_iter()
        .filter(|(payer, _)| !clusters.of.contains_key(payer))
        .collect();
    clusters
}

/// The funders that fund at least `hub_fanout` distinct accounts within one window, and the
/// zero address (the mint). `edges` are in chain order.
fn hubs(edges: &[&FundingEdge], params: &FundingParams) -> BTreeSet<Address> {
    let mut by_funder: BTreeMap<Address, Vec<(u64, Address)>> = BTreeMap::new();
    for edge in edges {
        by_funder
            .entry(edge.funder)
            .or_default()
            .push((edge.block, edge.funded));
    }
    let mut hubs = BTreeSet::from([Address::ZERO]);
    for (funder, funded) in by_funder {
        if widest_window(&funded, params.window_blocks) >= params.hub_fanout {
            hubs.insert(funder);
        }
    }
    hubs
}

/// The most distinct accounts among `funded` (in block order) within any `window` blocks.
fn widest_window(funded: &[(u64, Address)], window: u64) -> usize {
    let mut in_window: HashMap<Address, usize> = HashMap::new();
    let (mut start, mut widest) = (0, 0);
    for &(block, account) in funded {
        *in_window.entry(account).or_default() += 1;
        while funded[start].0 + window < block {
            let leaving = funded[start].1;
            let count = in_window
                .get_mut(&leaving)
                .expect("counted when it entered");
            *count -= 1;
            if *count == 0 {
                in_window.remove(&leaving);
            }
            start += 1;
        }
        widest = widest.max(in_window.len());
    }
    widest
}

/// Each cluster's explanation (by root, for the roots of `clusters`; `size` left at 0): the
/// funder of most of its accounts (the smallest address among equals), and that funder's first
/// funding block in it. One pass over the edges.
fn explain(
    edges: &[&FundingEdge],
    number: &HashMap<Address, usize>,
    roots: &mut Roots,
    clusters: &BTreeMap<usize, Vec<Address>>,
) -> BTreeMap<usize, PayerCluster> {
    type FundedBy = BTreeMap<Address, (BTreeSet<Address>, u64)>;
    let mut funded_by: BTreeMap<usize, FundedBy> = BTreeMap::new();
    for edge in edges {
        let root = roots.root(number[&edge.funder]);
        if !clusters.contains_key(&root) {
            continue;
        }
        let (funded, first) = funded_by
            .entry(root)
            .or_default()
            .entry(edge.funder)
            .or_insert_with(|| (BTreeSet::new(), edge.block));
        funded.insert(edge.funded);
        *first = (*first).min(edge.block);
    }
    funded_by
        .into_iter()
        .map(|(root, funders)| {
            // Most accounts funded first; among equals the smallest address (the map's order).
            let mut best: Option<(Address, usize, u64)> = None;
            for (funder, (funded, first)) in funders {
                if best.is_none_or(|(_, most, _)| funded.len() > most) {
                    best = Some((funder, funded.len(), first));
                }
            }
            let (funder, _, block) = best.expect("a funder was seen");
            let cluster = PayerCluster {
                funder,
                size: 0,
                block,
            };
            (root, cluster)
        })
        .collect()
}

/// Union-find over numbered accounts: a root is its component's smallest number.
struct Roots {
    parent: Vec<usize>,
}

impl Roots {
    fn new(accounts: usize) -> Self {
        Self {
            parent: (0..accounts).collect(),
        }
    }

    fn root(&mut self, mut account: usize) -> usize {
        let mut root = account;
        while self.parent[root] != root {
            root = self.parent[root];
        }
        while self.parent[account] != root {
            let next = self.parent[account];
            self.parent[account] = root;
            account = next;
        }
        root
    }

    fn join(&mut self, a: usize, b: usize) {
        let (a, b) = (self.root(a), self.root(b));
        let (low, high) = (a.min(b), a.max(b));
        self.parent[high] = low;
    }
}

#[cfg(test)]
#[path = "funding_tests.rs"]
mod tests;
