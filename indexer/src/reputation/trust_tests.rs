use super::*;
use crate::reputation::funding::{FundingEdge, FundingParams, payer_clusters};
use alloy::primitives::U256;

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
        let rank = trust_rank(
            &graph(sybils),
            &BTreeMap::new(),
            &TrustParams::default(),
            &PayerClusters::default(),
        );
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
    let unseeded = trust_rank(
        &edges,
        &BTreeMap::new(),
        &TrustParams::default(),
        &PayerClusters::default(),
    );
    assert!(!unseeded.seeded, "no payer is broad: the rank says nothing");
    let params = TrustParams {
        seeds: BTreeSet::from([edge(1, "").payer]),
        ..TrustParams::default()
    };
    let seeded = trust_rank(&edges, &BTreeMap::new(), &params, &PayerClusters::default());
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
    let rank = trust_rank(
        &edges,
        &addresses,
        &TrustParams::default(),
        &PayerClusters::default(),
    );
    assert!(rank.agents["z"].relative > 0.0);
    let unbound = trust_rank(
        &edges,
        &BTreeMap::new(),
        &TrustParams::default(),
        &PayerClusters::default(),
    );
    assert_eq!(unbound.agents["z"].relative, 0.0);
}

#[test]
fn the_rank_does_not_depend_on_the_order_of_edges() {
    let mut edges = graph(30);
    let forward = trust_rank(
        &edges,
        &BTreeMap::new(),
        &TrustParams::default(),
        &PayerClusters::default(),
    );
    edges.reverse();
    let backward = trust_rank(
        &edges,
        &BTreeMap::new(),
        &TrustParams::default(),
        &PayerClusters::default(),
    );
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

/// `funder` sends 5 USDC to `to` at `block`; `to` moves money on at `next_block`.
fn funded(funder: u16, to: u16, block: u64, next_block: u64) -> FundingEdge {
    FundingEdge {
        funder: edge(funder, "").payer,
        funded: edge(to, "").payer,
        block,
        log_index: u64::from(to),
        next_block,
        token: Address::repeat_byte(0x55),
        amount: U256::from(5_000_000u64),
    }
}

/// Issue #32's ring beside honest trade: five customers each pay "honest", "x" and "y"; one
/// account fills `wallets` fresh wallets, and each wallet pays 3 of the 4 ring agents. With `funder`
/// paying "x" and "y" itself when asked.
fn ring(wallets: u16, funder_pays: bool) -> (Vec<PaidEdge>, Vec<FundingEdge>, BTreeSet<Address>) {
    let mut paid = Vec::new();
    for customer in 1..=5 {
        for agent in ["honest", "x", "y"] {
            paid.push(edge(customer, agent));
        }
    }
    let mut funding = Vec::new();
    for wallet in 0..wallets {
        let puppet = 100 + wallet;
        funding.push(funded(50, puppet, 10, 11));
        for k in 0..3 {
            paid.push(edge(
                puppet,
                ["ring0", "ring1", "ring2", "ring3"][(usize::from(wallet) + k) % 4],
            ));
        }
    }
    if funder_pays {
        paid.push(edge(50, "x"));
        paid.push(edge(50, "y"));
    }
    let payers = paid.iter().map(|e| e.payer).collect();
    (paid, funding, payers)
}

fn clusters_of(funding: &[FundingEdge], payers: &BTreeSet<Address>) -> PayerClusters {
    payer_clusters(funding, payers, |_, _| false, &FundingParams::default())
}

#[test]
fn a_funded_ring_earns_no_trust_once_its_wallets_are_one_payer() {
    for funder_pays in [false, true] {
        let (paid, funding, payers) = ring(16, funder_pays);
        let params = TrustParams::default();
        let blind = trust_rank(&paid, &BTreeMap::new(), &params, &PayerClusters::default());
        assert!(
            blind.agents["ring0"].relative > blind.agents["honest"].relative,
            "without clusters the ring outranks honest trade: the test sees the attack"
        );
        let clusters = clusters_of(&funding, &payers);
        assert_eq!(clusters.of.len(), 16 + usize::from(funder_pays));
        let rank = trust_rank(&paid, &BTreeMap::new(), &params, &clusters);
        for ring_agent in ["ring0", "ring1", "ring2", "ring3"] {
            assert_eq!(rank.agents[ring_agent].relative, 0.0, "{ring_agent}");
        }
        assert!(rank.agents["honest"].relative > 0.5);
        assert_eq!(rank.standing[&edge(100, "").payer], 0.0);
        if funder_pays {
            // The funder is broad through what it pays outside the ring: its own seed stays.
            assert!(rank.standing[&edge(50, "").payer] > 0.0);
        }
    }
}

#[test]
fn clusters_that_join_no_payer_of_the_graph_change_nothing() {
    let edges = graph(30);
    let unrelated = clusters_of(
        &[funded(60000, 60001, 1, 2), funded(60000, 60002, 1, 2)],
        &[edge(60001, "").payer, edge(60002, "").payer].into(),
    );
    assert_eq!(unrelated.of.len(), 2);
    let params = TrustParams::default();
    assert_eq!(
        TrustRank {
            clusters: PayerClusters::default(),
            ..trust_rank(&edges, &BTreeMap::new(), &params, &unrelated)
        },
        trust_rank(&edges, &BTreeMap::new(), &params, &PayerClusters::default())
    );
}

#[test]
fn a_ring_funded_all_at_once_gains_nothing_by_passing_for_a_hub() {
    // 64 wallets filled in one block make their funder a hub: none is clustered, but all share
    // one source of money, and the ring agents are paid from that source alone.
    let (paid, funding, payers) = ring(64, false);
    let params = TrustParams::default();
    let blind = trust_rank(&paid, &BTreeMap::new(), &params, &PayerClusters::default());
    assert!(blind.agents["ring0"].relative > blind.agents["honest"].relative);
    let clusters = clusters_of(&funding, &payers);
    assert!(clusters.hubs.contains(&edge(50, "").payer));
    assert!(clusters.of.is_empty());
    assert_eq!(clusters.sources.len(), 64);
    let rank = trust_rank(&paid, &BTreeMap::new(), &params, &clusters);
    for ring_agent in ["ring0", "ring1", "ring2", "ring3"] {
        assert_eq!(rank.agents[ring_agent].relative, 0.0, "{ring_agent}");
    }
    assert!(rank.agents["honest"].relative > 0.5);
}

#[test]
fn customers_of_one_exchange_keep_their_standing() {
    // An exchange funds 200 customers within one window, each paying 2 of 6 honest agents that
    // five customers funded elsewhere pay too: the rank is the one without the funding.
    let honest = ["h0", "h1", "h2", "h3", "h4", "h5"];
    let mut paid = Vec::new();
    for customer in 1..=5 {
        for agent in honest {
            paid.push(edge(customer, agent));
        }
    }
    let mut funding = Vec::new();
    for c in 0..200u16 {
        let customer = 1000 + c;
        funding.push(funded(9, customer, 100 + u64::from(c % 10), 120));
        paid.push(edge(customer, honest[usize::from(c) % 6]));
        paid.push(edge(customer, honest[(usize::from(c) + 1) % 6]));
    }
    let payers: BTreeSet<Address> = paid.iter().map(|e| e.payer).collect();
    let clusters = clusters_of(&funding, &payers);
    assert!(clusters.of.is_empty());
    assert_eq!(clusters.sources.len(), 200);
    let params = TrustParams::default();
    let with = trust_rank(&paid, &BTreeMap::new(), &params, &clusters);
    let without = trust_rank(&paid, &BTreeMap::new(), &params, &PayerClusters::default());
    assert_eq!(with.clusters, clusters);
    assert_eq!(
        TrustRank {
            clusters: PayerClusters::default(),
            ..with.clone()
        },
        without
    );
    assert!(with.standing[&edge(1000, "").payer] > 0.5);
}

#[test]
fn edges_summed_payment_by_payment_weigh_each_payers_decayed_count() {
    let payer = |n: u16| edge(n, "").payer;
    let (as_of, half_life) = (10_000, 3_600.0);
    let mut sums = EdgeSums::new(as_of, half_life);
    // Two agents, the first paid three times by one payer (once after `as_of`) and once by
    // another, fed as a stream would bring them: by agent, then block.
    for (agent, from, at) in [
        ("a", 2, 1_000),
        ("a", 1, 4_000),
        ("a", 2, 9_000),
        ("a", 2, 12_000),
        ("b", 1, 10_000),
    ] {
        sums.add(agent, payer(from), at);
    }
    let decay = |at: u64| crate::reputation::features::decay(as_of - at, half_life);
    let expected = vec![
        (payer(1), "a".to_string(), decay(4_000).ln_1p()),
        (
            payer(2),
            "a".to_string(),
            (decay(1_000) + decay(9_000)).ln_1p(),
        ),
        (payer(1), "b".to_string(), decay(10_000).ln_1p()),
    ];
    let got: Vec<(Address, String, f64)> = sums
        .into_edges()
        .into_iter()
        .map(|e| (e.payer, e.agent, e.weight))
        .collect();
    assert_eq!(got, expected, "one edge per agent and payer, weights exact");
    assert_eq!(
        edges(
            [("a", payer(2), 1_000), ("a", payer(2), 9_000)],
            as_of,
            half_life
        )[0]
        .weight,
        (decay(1_000) + decay(9_000)).ln_1p()
    );
}
