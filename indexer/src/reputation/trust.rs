//! The trust rank: a seeded PageRank over the payment graph, in the family of EigenTrust and
//! TraceRank. Every payer and every agent is a node; a counted payment is an edge from the payer
//! to the agent, weighted `ln(1 + n)` by the payer's age-decayed payment count, as the payment
//! score weighs it. An agent that pays others from its payment address is the same node as the
//! agent, so the trust it earned flows on through what it pays.
//!
//! Trust starts at seeds and nowhere else: the configured seed addresses, and every payer in
//! proportion to `ln(breadth)`, its breadth being how many agents it pays that someone else also
//! pays. A fresh wallet that pays one agent is no seed and nobody pays it, so it holds no trust
//! and passes none on: thirty such wallets add nothing to an agent's trust, and little to its
//! payment score (see [`super::score`], where payers without standing share a capped sum).
//!
//! Deterministic: nodes are visited in a fixed order and sums taken in that order, so two
//! instances with the same payments compute the same floats.

use crate::config::TrustConfig;
use alloy::primitives::Address;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Iterations at most; the rank stops earlier once it moves less than [`TOLERANCE`].
const MAX_ITERATIONS: usize = 200;
/// Total change (L1) under which the rank has converged.
const TOLERANCE: f64 = 1e-12;
/// How many payers the explanation of an agent's trust names.
pub const TOP_PAYERS: usize = 5;

/// Parameters of the trust rank (`[reputation.trust]`).
#[derive(Debug, Clone, PartialEq)]
pub struct TrustParams {
    /// Share of trust that follows payments at each step.
    pub damping: f64,
    /// The rank is computed as of every multiple of this block number.
    pub interval_blocks: u64,
    /// Configured seed addresses.
    pub seeds: BTreeSet<Address>,
    /// Seed weight of each configured seed.
    pub seed_weight: f64,
    /// The most payers without standing add to a payment sum together.
    pub unproven_cap: f64,
    /// Relative trust at which the component reaches 63.
    pub scale: f64,
}

impl Default for TrustParams {
    fn default() -> Self {
        Self::from(&TrustConfig::default())
    }
}

impl From<&TrustConfig> for TrustParams {
    fn from(config: &TrustConfig) -> Self {
        Self {
            damping: config.damping,
            interval_blocks: config.interval_blocks,
            seeds: config.seeds.iter().copied().collect(),
            seed_weight: config.seed_weight,
            unproven_cap: config.unproven_cap,
            scale: config.scale,
        }
    }
}

impl TrustParams {
    /// The block the rank in force at `block` is computed as of: the last multiple of the
    /// interval at or before it.
    pub fn epoch_of(&self, block: u64) -> u64 {
        block - block % self.interval_blocks.max(1)
    }
}

/// One edge of the payment graph: a payer's counted payments to one agent.
#[derive(Debug, Clone, PartialEq)]
pub struct PaidEdge {
    /// Who paid.
    pub payer: Address,
    /// The agent paid (its key).
    pub agent: String,
    /// `ln(1 + n)`, `n` the age-decayed count of the payer's payments to the agent.
    pub weight: f64,
}

/// The edges of the payment graph as of `as_of` from counted payments `(agent, payer,
/// timestamp)`: one per payer and agent, weighted `ln(1 + n)` with `n` the payments' count
/// decayed by `half_life_secs`. Payments after `as_of` are left out.
pub fn edges<'a>(
    payments: impl IntoIterator<Item = (&'a str, Address, u64)>,
    as_of: u64,
    half_life_secs: f64,
) -> Vec<PaidEdge> {
    let mut decayed: BTreeMap<(&str, Address), f64> = BTreeMap::new();
    for (agent, payer, timestamp) in payments {
        if timestamp <= as_of {
            *decayed.entry((agent, payer)).or_default() +=
                super::features::decay(as_of - timestamp, half_life_secs);
        }
    }
    decayed
        .into_iter()
        .map(|((agent, payer), n)| PaidEdge {
            payer,
            agent: agent.to_string(),
            weight: n.ln_1p(),
        })
        .collect()
}

/// A payer's share of an agent's trust.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrustContribution {
    /// The payer.
    pub payer: Address,
    /// The trust it passed to the agent, relative to the average agent's trust.
    pub trust: f64,
}

/// One agent's trust.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentTrust {
    /// Its trust relative to the average paid agent's (1 = average).
    pub relative: f64,
    /// The payers that passed it most trust, most first.
    pub top_payers: Vec<TrustContribution>,
}

/// The trust rank of a chain as of one block.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrustRank {
    /// Every paid agent's trust.
    pub agents: BTreeMap<String, AgentTrust>,
    /// Every payer's standing: its trust relative to the average trusted payer's, at most 1.
    pub standing: BTreeMap<Address, f64>,
    /// Whether any seed holds trust; without one the rank says nothing.
    pub seeded: bool,
    /// Iterations it took.
    pub iterations: usize,
}

/// The node an address is: the agent it is a payment address of, or itself.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Node {
    Agent(String),
    Account(Address),
}

/// Computes the trust rank of the payment graph `edges`. `addresses` maps agents' payment
/// addresses to their agent (an address bound to several goes to the first), so that an agent
/// paying others is one node with the agent it is.
pub fn trust_rank(
    edges: &[PaidEdge],
    addresses: &BTreeMap<Address, String>,
    params: &TrustParams,
) -> TrustRank {
    let node_of = |address: &Address| match addresses.get(address) {
        Some(agent) => Node::Agent(agent.clone()),
        None => Node::Account(*address),
    };
    // Nodes in a fixed order, and each edge merged per (from, to) node.
    let mut merged: BTreeMap<(Node, Node), f64> = BTreeMap::new();
    for edge in edges.iter().filter(|e| e.weight > 0.0) {
        let from = node_of(&edge.payer);
        let to = Node::Agent(edge.agent.clone());
        if from != to {
            *merged.entry((from, to)).or_default() += edge.weight;
        }
    }
    let mut nodes: BTreeSet<Node> = BTreeSet::new();
    for (from, to) in merged.keys() {
        nodes.insert(from.clone());
        nodes.insert(to.clone());
    }
    for seed in &params.seeds {
        nodes.insert(node_of(seed));
    }
    let nodes: Vec<Node> = nodes.into_iter().collect();
    let index: BTreeMap<&Node, usize> = nodes.iter().enumerate().map(|(i, n)| (n, i)).collect();
    let mut out_edges: Vec<Vec<(usize, f64)>> = vec![Vec::new(); nodes.len()];
    let mut in_payers: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); nodes.len()];
    for ((from, to), weight) in &merged {
        let (f, t) = (index[from], index[to]);
        out_edges[f].push((t, *weight));
        in_payers[t].insert(f);
    }
    for edges in &mut out_edges {
        let total: f64 = edges.iter().map(|(_, w)| w).sum();
        for (_, w) in edges.iter_mut() {
            *w /= total;
        }
    }

    // Seeds: configured addresses, and payers by the breadth of what they pay.
    let mut seed = vec![0.0; nodes.len()];
    for (i, edges) in out_edges.iter().enumerate() {
        let breadth = edges
            .iter()
            .filter(|(to, _)| in_payers[*to].len() >= 2)
            .count();
        if breadth >= 2 {
            seed[i] += (breadth as f64).ln();
        }
    }
    for address in &params.seeds {
        seed[index[&node_of(address)]] += params.seed_weight;
    }
    let seed_total: f64 = seed.iter().sum();
    if seed_total <= 0.0 {
        return TrustRank::default();
    }
    for s in &mut seed {
        *s /= seed_total;
    }

    let d = params.damping;
    let mut trust = seed.clone();
    let mut iterations = 0;
    while iterations < MAX_ITERATIONS {
        iterations += 1;
        let mut next: Vec<f64> = seed.iter().map(|s| (1.0 - d) * s).collect();
        // Trust held by nodes that pay nobody goes back to the seeds.
        let mut dangling = 0.0;
        for (i, edges) in out_edges.iter().enumerate() {
            if edges.is_empty() {
                dangling += trust[i];
            }
            for (to, share) in edges {
                next[*to] += d * trust[i] * share;
            }
        }
        for (n, s) in next.iter_mut().zip(&seed) {
            *n += d * dangling * s;
        }
        let change: f64 = next.iter().zip(&trust).map(|(a, b)| (a - b).abs()).sum();
        trust = next;
        if change < TOLERANCE {
            break;
        }
    }

    // Relative trust of agents, and the standing of payers.
    let paid: Vec<usize> = (0..nodes.len())
        .filter(|i| matches!(nodes[*i], Node::Agent(_)) && !in_payers[*i].is_empty())
        .collect();
    let mean_agent = paid.iter().map(|i| trust[*i]).sum::<f64>() / paid.len().max(1) as f64;
    let payers: Vec<usize> = (0..nodes.len())
        .filter(|i| !out_edges[*i].is_empty())
        .collect();
    let trusted: Vec<f64> = payers
        .iter()
        .map(|i| trust[*i])
        .filter(|t| *t > 0.0)
        .collect();
    let mean_payer = trusted.iter().sum::<f64>() / trusted.len().max(1) as f64;
    let relative = |t: f64, mean: f64| if mean > 0.0 { t / mean } else { 0.0 };

    let mut standing = BTreeMap::new();
    let mut by_address: BTreeMap<Address, usize> = BTreeMap::new();
    for edge in edges {
        by_address
            .entry(edge.payer)
            .or_insert_with(|| index[&node_of(&edge.payer)]);
    }
    let mut address_of: BTreeMap<usize, Address> = BTreeMap::new();
    for (address, i) in &by_address {
        standing.insert(*address, relative(trust[*i], mean_payer).min(1.0));
        address_of.entry(*i).or_insert(*address);
    }
    let mut agents = BTreeMap::new();
    for i in paid {
        let Node::Agent(key) = &nodes[i] else {
            continue;
        };
        let mut contributions: Vec<(usize, f64)> = in_payers[i]
            .iter()
            .map(|from| {
                let share = out_edges[*from]
                    .iter()
                    .find(|(to, _)| *to == i)
                    .map_or(0.0, |(_, s)| *s);
                (*from, relative(d * trust[*from] * share, mean_agent))
            })
            .filter(|(_, t)| *t > 0.0)
            .collect();
        contributions.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let top_payers = contributions
            .into_iter()
            .take(TOP_PAYERS)
            .filter_map(|(from, trust)| {
                let payer = *address_of.get(&from)?;
                Some(TrustContribution { payer, trust })
            })
            .collect();
        agents.insert(
            key.clone(),
            AgentTrust {
                relative: relative(trust[i], mean_agent),
                top_payers,
            },
        );
    }
    TrustRank {
        agents,
        standing,
        seeded: true,
        iterations,
    }
}

/// The trust component (0–100) of an agent with relative trust `relative`.
pub fn trust_component(relative: f64, params: &TrustParams) -> f64 {
    100.0 * (1.0 - (-relative / params.scale).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(payer: u16, agent: &str) -> PaidEdge {
        let mut bytes = [0u8; 20];
        bytes[18..].copy_from_slice(&payer.to_be_bytes());
        PaidEdge {
            payer: Address::from(bytes),
            agent: agent.to_string(),
            weight: 2f64.ln(),
        }
    }

    /// Six wallets that each pay the honest agent and two agents others pay too, and `sybils`
    /// fresh wallets that each pay the sybil agent once.
    fn graph(sybils: u16) -> Vec<PaidEdge> {
        let mut edges = Vec::new();
        for payer in 1..=6 {
            for agent in ["honest", "x", "y"] {
                edges.push(edge(payer, agent));
            }
        }
        for payer in 1000..1000 + sybils {
            edges.push(edge(payer, "sybil"));
        }
        edges
    }

    #[test]
    fn fresh_wallets_pass_no_trust_however_many() {
        for sybils in [30, 300] {
            let rank = trust_rank(&graph(sybils), &BTreeMap::new(), &TrustParams::default());
            assert!(rank.seeded);
            assert!(rank.agents["honest"].relative > 0.5);
            assert_eq!(rank.agents["sybil"].relative, 0.0);
            assert_eq!(rank.standing[&edge(1000, "").payer], 0.0);
            assert_eq!(rank.standing[&edge(1, "").payer], 1.0);
            assert_eq!(rank.agents["honest"].top_payers.len(), TOP_PAYERS);
        }
    }

    #[test]
    fn a_seed_makes_the_agents_it_pays_trusted() {
        let edges = vec![edge(1, "a"), edge(2, "b")];
        let unseeded = trust_rank(&edges, &BTreeMap::new(), &TrustParams::default());
        assert!(!unseeded.seeded, "no payer is broad: the rank says nothing");
        let params = TrustParams {
            seeds: BTreeSet::from([edge(1, "").payer]),
            ..TrustParams::default()
        };
        let seeded = trust_rank(&edges, &BTreeMap::new(), &params);
        assert!(seeded.agents["a"].relative > seeded.agents["b"].relative);
        assert_eq!(seeded.agents["b"].relative, 0.0);
    }

    #[test]
    fn an_agent_passes_on_the_trust_it_earned() {
        // Agent "a" earns trust from the broad payers and pays "z" from its payment address.
        let mut edges = graph(0);
        edges.push(edge(1, "a"));
        edges.push(edge(2, "a"));
        edges.push(edge(500, "z"));
        let addresses = BTreeMap::from([(edge(500, "").payer, "a".to_string())]);
        let rank = trust_rank(&edges, &addresses, &TrustParams::default());
        assert!(rank.agents["z"].relative > 0.0);
        let unbound = trust_rank(&edges, &BTreeMap::new(), &TrustParams::default());
        assert_eq!(unbound.agents["z"].relative, 0.0);
    }

    #[test]
    fn the_rank_does_not_depend_on_the_order_of_edges() {
        let mut edges = graph(30);
        let forward = trust_rank(&edges, &BTreeMap::new(), &TrustParams::default());
        edges.reverse();
        let backward = trust_rank(&edges, &BTreeMap::new(), &TrustParams::default());
        assert_eq!(forward, backward);
    }

    #[test]
    fn epochs_are_multiples_of_the_interval() {
        let params = TrustParams {
            interval_blocks: 100,
            ..TrustParams::default()
        };
        assert_eq!(
            [
                params.epoch_of(0),
                params.epoch_of(99),
                params.epoch_of(250)
            ],
            [0, 0, 200]
        );
    }
}
