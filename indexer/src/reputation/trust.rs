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

use super::funding::{FundingParams, PayerClusters};
use crate::config::TrustConfig;
use alloy::primitives::Address;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};

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
    /// Blocks over which a new epoch's rank goes into force, group by group (see `rollout`).
    pub rollout_blocks: u64,
    /// Configured seed addresses.
    pub seeds: BTreeSet<Address>,
    /// Seed weight of each configured seed.
    pub seed_weight: f64,
    /// The most payers without standing add to a payment sum together.
    pub unproven_cap: f64,
    /// Relative trust at which the component reaches 63.
    pub scale: f64,
    /// How funding transfers join payers into clusters.
    pub funding: FundingParams,
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
            rollout_blocks: config.rollout_blocks,
            seeds: config.seeds.iter().copied().collect(),
            seed_weight: config.seed_weight,
            unproven_cap: config.unproven_cap,
            scale: config.scale,
            funding: FundingParams {
                window_blocks: config.funding_window_blocks,
                hub_fanout: config.funding_hub_fanout,
            },
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
    let mut sums = EdgeSums::new(as_of, half_life_secs);
    for (agent, payer, timestamp) in payments {
        sums.add(agent, payer, timestamp);
    }
    sums.into_edges()
}

/// The payment graph's edges summed one payment at a time, so payments read from a stream are
/// never all held at once: memory goes with the distinct payers of each agent, not with the
/// payments. Each edge's floats depend on the order its payments are added in.
#[derive(Debug)]
pub struct EdgeSums {
    decayed: BTreeMap<String, BTreeMap<Address, f64>>,
    as_of: u64,
    half_life_secs: f64,
}

impl EdgeSums {
    /// Sums for the graph as of `as_of`, decayed by `half_life_secs`.
    pub fn new(as_of: u64, half_life_secs: f64) -> Self {
        Self {
            decayed: BTreeMap::new(),
            as_of,
            half_life_secs,
        }
    }

    /// Counts one payment from `payer` to `agent` at `timestamp` (left out if after `as_of`).
    pub fn add(&mut self, agent: &str, payer: Address, timestamp: u64) {
        if timestamp > self.as_of {
            return;
        }
        let decay = super::features::decay(self.as_of - timestamp, self.half_life_secs);
        let payers = match self.decayed.get_mut(agent) {
            Some(payers) => payers,
            None => self.decayed.entry(agent.to_string()).or_default(),
        };
        *payers.entry(payer).or_default() += decay;
    }

    /// The edges, by agent and then payer.
    pub fn into_edges(self) -> Vec<PaidEdge> {
        self.decayed
            .into_iter()
            .flat_map(|(agent, payers)| {
                payers.into_iter().map(move |(payer, n)| PaidEdge {
                    payer,
                    agent: agent.clone(),
                    weight: n.ln_1p(),
                })
            })
            .collect()
    }
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
    /// The funding clusters it ran with.
    pub clusters: PayerClusters,
}

/// Computes the trust rank of the payment graph `edges`. `addresses` maps agents' payment
/// addresses to their agent (an address bound to several goes to the first), so that an agent
/// paying others is one node with the agent it is.
///
/// Payers `clusters` joins (by who funded them, [`super::funding`]) are one payer to the seeds:
/// an agent makes a payer broad only when payers of two sources of money pay it (two clusters,
/// or payers funded by two hubs, or by none), and a cluster's seed is what one payer of its
/// joint breadth would get, shared among its members by their own.
/// Without clusters every payer is its own, and the floats are what they were before clusters.
///
/// Nodes are numbered agents first (by key), then the other accounts (by address), and every sum
/// runs in that order, so the floats do not depend on the order of `edges`.
pub fn trust_rank(
    edges: &[PaidEdge],
    addresses: &BTreeMap<Address, String>,
    params: &TrustParams,
    clusters: &PayerClusters,
) -> TrustRank {
    // Number the nodes.
    let mut agent_keys: BTreeSet<&str> = edges.iter().map(|e| e.agent.as_str()).collect();
    for seed in &params.seeds {
        if let Some(agent) = addresses.get(seed) {
            agent_keys.insert(agent.as_str());
        }
    }
    let agent_keys: Vec<&str> = agent_keys.into_iter().collect();
    let agent_index: HashMap<&str, usize> = agent_keys
        .iter()
        .enumerate()
        .map(|(i, k)| (*k, i))
        .collect();
    let agent_of = |address: &Address| {
        addresses
            .get(address)
            .and_then(|agent| agent_index.get(agent.as_str()).copied())
    };
    let mut accounts: BTreeSet<Address> = BTreeSet::new();
    for address in edges.iter().map(|e| &e.payer).chain(&params.seeds) {
        if agent_of(address).is_none() {
            accounts.insert(*address);
        }
    }
    let first_account = agent_keys.len();
    let account_index: HashMap<Address, usize> = accounts
        .iter()
        .enumerate()
        .map(|(i, a)| (*a, first_account + i))
        .collect();
    let node_of = |address: &Address| agent_of(address).unwrap_or_else(|| account_index[address]);
    let nodes = first_account + accounts.len();

    // Edges merged per (from, to), in that order; each payer's shares sum to 1.
    let mut merged: Vec<(usize, usize, f64)> = edges
        .iter()
        .filter(|e| e.weight > 0.0)
        .map(|e| (node_of(&e.payer), agent_index[e.agent.as_str()], e.weight))
        .filter(|(from, to, _)| from != to)
        .collect();
    merged.sort_by_key(|e| (e.0, e.1));
    merged.dedup_by(|later, kept| {
        let same = (later.0, later.1) == (kept.0, kept.1);
        if same {
            kept.2 += later.2;
        }
        same
    });
    let mut starts = vec![0usize; nodes + 1];
    for (from, _, _) in &merged {
        starts[from + 1] += 1;
    }
    for i in 0..nodes {
        starts[i + 1] += starts[i];
    }
    let mut payers_of = vec![0usize; nodes];
    for (_, to, _) in &merged {
        payers_of[*to] += 1;
    }
    for from in 0..nodes {
        let range = starts[from]..starts[from + 1];
        let total: f64 = merged[range.clone()].iter().map(|e| e.2).sum();
        for edge in &mut merged[range] {
            edge.2 /= total;
        }
    }

    // Seeds: configured addresses, and payers by the breadth of what they pay.
    let (cluster, source) = cluster_of_nodes(nodes, clusters, &account_index);
    let mut seed = payer_seeds(nodes, &merged, &starts, &cluster, &source);
    for address in &params.seeds {
        seed[node_of(address)] += params.seed_weight;
    }
    let seed_total: f64 = seed.iter().sum();
    if seed_total <= 0.0 {
        return TrustRank {
            clusters: clusters.clone(),
            ..TrustRank::default()
        };
    }
    for s in &mut seed {
        *s /= seed_total;
    }

    let d = params.damping;
    let mut trust = seed.clone();
    let mut iterations = 0;
    while iterations < MAX_ITERATIONS {
        iterations += 1;
        // A past epoch's rank is computed for a feed, on a lowered thread.
        crate::priority::offer_core();
        let mut next: Vec<f64> = seed.iter().map(|s| (1.0 - d) * s).collect();
        // Trust held by nodes that pay nobody goes back to the seeds.
        let mut dangling = 0.0;
        for from in 0..nodes {
            let out = &merged[starts[from]..starts[from + 1]];
            if out.is_empty() {
                dangling += trust[from];
            }
            for (_, to, share) in out {
                next[*to] += d * trust[from] * share;
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
    let paid: Vec<usize> = (0..first_account).filter(|i| payers_of[*i] > 0).collect();
    let mean_agent = paid.iter().map(|i| trust[*i]).sum::<f64>() / paid.len().max(1) as f64;
    let trusted: Vec<f64> = (0..nodes)
        .filter(|i| starts[*i + 1] > starts[*i])
        .map(|i| trust[i])
        .filter(|t| *t > 0.0)
        .collect();
    let mean_payer = trusted.iter().sum::<f64>() / trusted.len().max(1) as f64;
    let relative = |t: f64, mean: f64| if mean > 0.0 { t / mean } else { 0.0 };

    let mut standing = BTreeMap::new();
    let mut address_of: BTreeMap<usize, Address> = BTreeMap::new();
    for payer in edges.iter().map(|e| e.payer) {
        if let std::collections::btree_map::Entry::Vacant(entry) = standing.entry(payer) {
            let node = node_of(&payer);
            entry.insert(relative(trust[node], mean_payer).min(1.0));
            address_of.entry(node).or_insert(payer);
        }
    }
    let mut incoming: Vec<Vec<(usize, f64)>> = vec![Vec::new(); first_account];
    for (from, to, share) in &merged {
        incoming[*to].push((*from, relative(d * trust[*from] * share, mean_agent)));
    }
    let mut agents = BTreeMap::new();
    for i in paid {
        let mut contributions: Vec<(usize, f64)> = std::mem::take(&mut incoming[i])
            .into_iter()
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
            agent_keys[i].to_string(),
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
        clusters: clusters.clone(),
    }
}

/// Each node's funding cluster: a number past the nodes shared by the members of one cluster
/// of `clusters`, else the node's own (agents are never clustered: they are their own payers);
/// and each node's source of money: its cluster, or for a payer a hub funded, a number shared
/// by the hub's customers.
fn cluster_of_nodes(
    nodes: usize,
    clusters: &PayerClusters,
    account_index: &HashMap<Address, usize>,
) -> (Vec<usize>, Vec<usize>) {
    let mut cluster: Vec<usize> = (0..nodes).collect();
    let mut numbers: BTreeMap<Address, usize> = BTreeMap::new();
    for (payer, representative) in &clusters.of {
        if let Some(&node) = account_index.get(payer) {
            let next = nodes + numbers.len();
            cluster[node] = *numbers.entry(*representative).or_insert(next);
        }
    }
    let mut source = cluster.clone();
    let mut hubs: BTreeMap<Address, usize> = BTreeMap::new();
    let first_hub = nodes + numbers.len();
    for (payer, hub) in &clusters.sources {
        if let Some(&node) = account_index.get(payer) {
            let next = first_hub + hubs.len();
            source[node] = *hubs.entry(*hub).or_insert(next);
        }
    }
    (cluster, source)
}

/// Each node's seed from what it pays (`merged`, its out-edges from `starts[node]`): `ln` of
/// its breadth, the agents it pays that payers of another source of money pay too, when that
/// is at least 2; for a member of a cluster, `ln` of the cluster's joint breadth shared by the
/// members' own breadths.
fn payer_seeds(
    nodes: usize,
    merged: &[(usize, usize, f64)],
    starts: &[usize],
    cluster: &[usize],
    source: &[usize],
) -> Vec<f64> {
    // Agents paid from two sources or more (edges run by payer, so the first source seen is
    // compared with every later one).
    let mut first_source: Vec<Option<usize>> = vec![None; nodes];
    let mut broadly_paid = vec![false; nodes];
    for (from, to, _) in merged {
        match first_source[*to] {
            None => first_source[*to] = Some(source[*from]),
            Some(seen) if seen != source[*from] => broadly_paid[*to] = true,
            Some(_) => {}
        }
    }
    let breadth: Vec<usize> = (0..nodes)
        .map(|from| {
            merged[starts[from]..starts[from + 1]]
                .iter()
                .filter(|(_, to, _)| broadly_paid[*to])
                .count()
        })
        .collect();
    // Each cluster's joint breadth and the sum of its members' own.
    let mut joint: BTreeSet<(usize, usize)> = BTreeSet::new();
    let mut members_breadth: BTreeMap<usize, usize> = BTreeMap::new();
    for from in (0..nodes).filter(|n| cluster[*n] != *n) {
        *members_breadth.entry(cluster[from]).or_default() += breadth[from];
        for (_, to, _) in &merged[starts[from]..starts[from + 1]] {
            if broadly_paid[*to] {
                joint.insert((cluster[from], *to));
            }
        }
    }
    let mut joint_breadth: BTreeMap<usize, usize> = BTreeMap::new();
    for (c, _) in joint {
        *joint_breadth.entry(c).or_default() += 1;
    }
    (0..nodes)
        .map(|node| {
            let own = breadth[node];
            if cluster[node] == node {
                return if own >= 2 { (own as f64).ln() } else { 0.0 };
            }
            let c = cluster[node];
            let joint = joint_breadth.get(&c).copied().unwrap_or(0);
            let all = members_breadth[&c];
            if joint >= 2 && own > 0 {
                (joint as f64).ln() * (own as f64 / all as f64)
            } else {
                0.0
            }
        })
        .collect()
}

/// The trust component (0–100) of an agent with relative trust `relative`.
pub fn trust_component(relative: f64, params: &TrustParams) -> f64 {
    100.0 * (1.0 - (-relative / params.scale).exp())
}

#[cfg(test)]
#[path = "trust_tests.rs"]
mod tests;
