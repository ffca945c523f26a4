//! Issue #32's puppet ring, played on anvil against the real ERC-8004 registry and USDC with
//! x402 payments (EIP-3009 authorisations a facilitator submits): one account funds 16 fresh
//! wallets, each pays 3 of 4 ring agents. Real customers (anvil's accounts, whose money came from
//! the token's mint) pay three busy agents and an honest agent with 5 customers. Without funding
//! clusters the ring buys the top four ranks; with them every ring agent ranks below the honest
//! one, funded directly, through three hops of intermediate wallets, or by a funder that pays
//! real agents itself. And 200 customers of one exchange-like hub keep their standing.

use crate::support;
use crate::support::wallets::{fresh_wallet, pay_signed};
use agentindex_contracts::{Devnet, DevnetOptions, confirm, demo};
use agentindex_indexer::config::Config;
use agentindex_indexer::primitives::AgentKey;
use agentindex_indexer::reputation::score::PayerPart;
use agentindex_indexer::store::{AgentReputation, StoreRead};
use alloy::primitives::{Address, U256};
use alloy::signers::local::PrivateKeySigner;
use std::collections::BTreeMap;

/// What each puppet receives from its funder: 4.11 USDC.
const PUPPET_FUNDS: u64 = 4_110_000;
/// What each puppet pays each of its ring agents: 1.37 USDC.
const RING_PAYMENT: u64 = 1_370_000;
const PUPPETS: usize = 16;

/// How the ring's puppets get their money.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Funding {
    /// One transfer each from the funder, just before they pay.
    Direct,
    /// Funder to 2 wallets, to 4, to the 16 puppets: three transfers from funder to puppet.
    ThreeHops,
    /// As `Direct`, and the funder pays the three busy agents itself.
    FunderPaysRealAgents,
}

/// Moves `value` USDC from the anvil account `from` to `to` with a plain `transfer`.
async fn transfer(devnet: &Devnet, from: Address, to: Address, value: u64, what: &str) {
    let usdc = devnet.usdc();
    let call = usdc.transfer(to, U256::from(value)).from(from);
    confirm(what, call.send()).await.unwrap();
}

/// The agents of a round, by name, each an ERC-8004 agent with its own `agentWallet`.
struct Agents {
    ids: BTreeMap<&'static str, U256>,
    wallets: BTreeMap<&'static str, Address>,
}

async fn register(devnet: &Devnet, names: &[&'static str], first_wallet: usize) -> Agents {
    let owner = devnet.accounts()[1];
    let mut agents = Agents {
        ids: BTreeMap::new(),
        wallets: BTreeMap::new(),
    };
    for (i, name) in names.iter().enumerate() {
        let id = demo::via_erc8004(devnet, owner, &format!("ipfs://{name}"))
            .await
            .unwrap();
        demo::set_agent_wallet(devnet, owner, id, first_wallet + i)
            .await
            .unwrap();
        agents.ids.insert(name, id);
        agents
            .wallets
            .insert(name, devnet.accounts()[first_wallet + i]);
    }
    agents
}

/// Indexes `devnet` into a fresh database under `adjust`ed settings (the rank as of the
/// indexed block itself) and reads each agent's stored reputation.
async fn index(
    devnet: &Devnet,
    agents: &Agents,
    adjust: impl FnOnce(&mut Config),
) -> BTreeMap<&'static str, AgentReputation> {
    index_kept(devnet, agents, adjust).await.0
}

/// A database file that is removed with its directory.
struct Database {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
}

impl Database {
    fn path(&self) -> &std::path::Path {
        &self.path
    }
}

/// As [`index`], keeping the database for more reads.
async fn index_kept(
    devnet: &Devnet,
    agents: &Agents,
    adjust: impl FnOnce(&mut Config),
) -> (BTreeMap<&'static str, AgentReputation>, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    let mut config = support::config(devnet, &db, 0);
    config.reputation.trust.interval_blocks = 1;
    adjust(&mut config);
    support::index_until_synced(&config).await;
    let store = support::open(&db).await;
    let mut out = BTreeMap::new();
    for (name, id) in &agents.ids {
        let key = AgentKey::erc8004(devnet.chain_id(), devnet.deployment().identity, *id);
        let reputation = store
            .reputation(&key.to_string())
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{name} has a stored reputation"));
        out.insert(*name, reputation);
    }
    store.close().await;
    (
        out,
        Database {
            _dir: dir,
            path: db,
        },
    )
}

const RING: [&str; 4] = ["ring 0", "ring 1", "ring 2", "ring 3"];
const BUSY: [&str; 3] = ["busy 0", "busy 1", "busy 2"];

/// Plays the ring funded by `funding` next to the real customers' payments.
async fn ring_round(funding: Funding) -> (Devnet, Agents) {
    let devnet = Devnet::start_with(DevnetOptions {
        accounts: 32,
        ..DevnetOptions::default()
    })
    .await
    .unwrap();
    let a = devnet.accounts();
    let (facilitator, funder) = (a[0], 2);
    let mut names: Vec<&'static str> = RING.to_vec();
    names.push("honest");
    names.extend(BUSY);
    let agents = register(&devnet, &names, 10).await;
    let wallet = |name: &str| agents.wallets[name];

    // Real customers: accounts 20 to 29. Busy agent k is paid by 8 + k of them; the honest
    // agent by the first five, who pay the busy agents too.
    for (k, busy) in BUSY.iter().enumerate() {
        for customer in 20..28 + k {
            pay_signed(
                &devnet,
                devnet.signer(customer),
                facilitator,
                wallet(busy),
                1_000_000,
            )
            .await;
        }
    }
    for customer in 20..25 {
        pay_signed(
            &devnet,
            devnet.signer(customer),
            facilitator,
            wallet("honest"),
            1_000_000,
        )
        .await;
    }
    if funding == Funding::FunderPaysRealAgents {
        for busy in BUSY {
            pay_signed(
                &devnet,
                devnet.signer(funder),
                facilitator,
                wallet(busy),
                1_000_000,
            )
            .await;
        }
    }

    // The ring: 16 puppets funded, then each pays 3 of the 4 ring agents.
    let puppets: Vec<PrivateKeySigner> = (0..PUPPETS).map(|i| fresh_wallet("puppet", i)).collect();
    match funding {
        Funding::Direct | Funding::FunderPaysRealAgents => {
            for puppet in &puppets {
                transfer(
                    &devnet,
                    a[funder],
                    puppet.address(),
                    PUPPET_FUNDS,
                    "funding a puppet",
                )
                .await;
            }
        }
        Funding::ThreeHops => {
            let first: Vec<PrivateKeySigner> = (0..2).map(|i| fresh_wallet("hop 1", i)).collect();
            let second: Vec<PrivateKeySigner> = (0..4).map(|i| fresh_wallet("hop 2", i)).collect();
            for wallet in &first {
                transfer(
                    &devnet,
                    a[funder],
                    wallet.address(),
                    8 * PUPPET_FUNDS,
                    "funding a first hop",
                )
                .await;
            }
            for (i, wallet) in second.iter().enumerate() {
                let from = &first[i / 2];
                pay_signed(
                    &devnet,
                    from,
                    facilitator,
                    wallet.address(),
                    4 * PUPPET_FUNDS,
                )
                .await;
            }
            for (i, puppet) in puppets.iter().enumerate() {
                let from = &second[i / 4];
                pay_signed(&devnet, from, facilitator, puppet.address(), PUPPET_FUNDS).await;
            }
        }
    }
    for (i, puppet) in puppets.iter().enumerate() {
        for (r, ring) in RING.iter().enumerate() {
            if r != i % RING.len() {
                pay_signed(&devnet, puppet, facilitator, wallet(ring), RING_PAYMENT).await;
            }
        }
    }
    (devnet, agents)
}

/// The part of `reputation`'s payment score that stands for a funding cluster, if any.
fn cluster_part(reputation: &AgentReputation) -> Option<&PayerPart> {
    reputation
        .evaluation
        .payment_score
        .payers
        .iter()
        .find(|p| p.cluster.is_some())
}

/// Every ring agent ranks below the honest one, its puppets one payer in a cluster of
/// `cluster_size` (funded by `funder` when given).
fn assert_ring_answered(
    scores: &BTreeMap<&'static str, AgentReputation>,
    cluster_size: u64,
    funder: Option<Address>,
) {
    let honest = &scores["honest"];
    for ring in RING {
        let agent = &scores[ring];
        assert!(
            agent.score < honest.score,
            "{ring} scores {} against the honest agent's {}",
            agent.score,
            honest.score
        );
        assert_eq!(
            agent.evaluation.payments.unique_payers, 1,
            "{ring}'s twelve puppets are one payer"
        );
        let part = cluster_part(agent).unwrap_or_else(|| panic!("{ring} names the cluster"));
        let cluster = part.cluster.as_ref().unwrap();
        assert_eq!(cluster.size, cluster_size, "{ring}: {cluster:?}");
        if let Some(funder) = funder {
            assert_eq!(cluster.funder, funder, "{ring}: {cluster:?}");
        }
        assert_eq!(part.payments, 12);
    }
    assert!(
        cluster_part(honest).is_none(),
        "real customers are in no cluster"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ring_funded_by_one_account_ranks_below_an_agent_with_five_real_customers() {
    let (devnet, agents) = ring_round(Funding::Direct).await;
    let funder = devnet.accounts()[2];
    // Without clusters (a window too short to join anyone) the ring buys the top ranks.
    let unclustered = index(&devnet, &agents, |config| {
        config.reputation.trust.funding_window_blocks = 1;
    })
    .await;
    for ring in RING {
        assert!(
            unclustered[ring].score > unclustered["honest"].score,
            "the attack works without the rule: {ring} {} against honest {}",
            unclustered[ring].score,
            unclustered["honest"].score
        );
    }
    let (scores, db) = index_kept(&devnet, &agents, |_| {}).await;
    assert_ring_answered(&scores, PUPPETS as u64, Some(funder));

    // The API says why the puppets count as one.
    let store = support::open(db.path()).await;
    let config = support::config(&devnet, db.path(), 0);
    let served = support::api::serve(store.clone(), &config).await;
    let key = AgentKey::erc8004(
        devnet.chain_id(),
        devnet.deployment().identity,
        agents.ids["ring 0"],
    );
    let shown = support::graphql::data(
        &format!("{}/graphql", served.base),
        "query($id: ID!) { agent(id: $id) { reputation {
            topPayers { payer payments cluster { funder size block } } } } }",
        serde_json::json!({ "id": key.to_string() }),
    )["agent"]["reputation"]["topPayers"]
        .clone();
    // So does the explorer's agent page, in a browser.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut node = std::process::Command::new("node");
    node.arg(root.join("tools/explorer/cluster_badge.mjs"))
        .current_dir(root.join("tools"));
    let page = support::tool::json_through(
        node,
        &serde_json::json!({ "base": served.base, "agent": key.to_string() }),
        "the explorer's agent page (tools/explorer/cluster_badge.mjs)",
    );
    served.stop().await;
    store.close().await;
    let parts = shown.as_array().unwrap();
    assert_eq!(parts.len(), 1, "one payer: {shown}");
    assert_eq!(parts[0]["payments"], 12);
    assert_eq!(parts[0]["cluster"]["size"], PUPPETS);
    assert_eq!(parts[0]["cluster"]["funder"], format!("{funder:#x}"));
    let block = parts[0]["cluster"]["block"].as_i64().unwrap();
    assert!(block > 0);
    let funder_hex = format!("{funder:#x}");
    assert_eq!(
        page["payers"][0]["badge"],
        format!(
            "cluster of {PUPPETS} funded by {}…{} at block {block}",
            &funder_hex[..6],
            &funder_hex[funder_hex.len() - 4..]
        ),
        "{page}"
    );
    assert_eq!(page["payers"].as_array().map(Vec::len), Some(1), "{page}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ring_funded_through_three_hops_of_intermediate_wallets_ranks_below_it_too() {
    let (devnet, agents) = ring_round(Funding::ThreeHops).await;
    let scores = index(&devnet, &agents, |_| {}).await;
    assert_ring_answered(&scores, PUPPETS as u64, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ring_whose_funder_pays_real_agents_ranks_below_it_too() {
    let (devnet, agents) = ring_round(Funding::FunderPaysRealAgents).await;
    let funder = devnet.accounts()[2];
    let scores = index(&devnet, &agents, |_| {}).await;
    // The funder pays too, so it is one of the cluster's payers.
    assert_ring_answered(&scores, PUPPETS as u64 + 1, Some(funder));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_customers_of_one_exchange_keep_their_standing() {
    const CUSTOMERS: usize = 200;
    let devnet = Devnet::start_with(DevnetOptions {
        accounts: 24,
        ..DevnetOptions::default()
    })
    .await
    .unwrap();
    let a = devnet.accounts();
    let (facilitator, exchange) = (a[0], a[3]);
    let names = ["shop 0", "shop 1", "shop 2", "shop 3"];
    let agents = register(&devnet, &names, 10).await;
    // Customer i pays shops i and i + 1 (mod 4): the exchange's 200, and eight accounts whose
    // money came from the mint, in the same pattern.
    let pays = |i: usize| [names[i % 4], names[(i + 1) % 4]];
    let customers: Vec<PrivateKeySigner> = (0..CUSTOMERS)
        .map(|i| fresh_wallet("exchange customer", i))
        .collect();
    for customer in &customers {
        transfer(
            &devnet,
            exchange,
            customer.address(),
            5_000_000,
            "an exchange withdrawal",
        )
        .await;
    }
    for (i, customer) in customers.iter().enumerate() {
        for shop in pays(i) {
            pay_signed(
                &devnet,
                customer,
                facilitator,
                agents.wallets[shop],
                1_000_000,
            )
            .await;
        }
    }
    for i in 0..8 {
        for shop in pays(i) {
            pay_signed(
                &devnet,
                devnet.signer(14 + i),
                facilitator,
                agents.wallets[shop],
                1_000_000,
            )
            .await;
        }
    }
    let scores = index(&devnet, &agents, |_| {}).await;
    let exchange_customers: std::collections::BTreeSet<Address> =
        customers.iter().map(|c| c.address()).collect();
    for shop in names {
        let evaluation = &scores[shop].evaluation;
        assert_eq!(
            evaluation.payments.unique_payers,
            (CUSTOMERS / 2 + 4) as u64,
            "{shop}: every customer counts"
        );
        let parts = &evaluation.payment_score.payers;
        assert!(
            parts.iter().all(|p| p.cluster.is_none()),
            "{shop}: no cluster"
        );
        // An exchange customer stands as tall as a customer of the same pattern whose money
        // came from elsewhere.
        let others: Vec<f64> = parts
            .iter()
            .filter(|p| !exchange_customers.contains(&p.payer))
            .map(|p| p.standing)
            .collect();
        let least_other = others.iter().copied().fold(f64::INFINITY, f64::min);
        for part in parts
            .iter()
            .filter(|p| exchange_customers.contains(&p.payer))
        {
            assert!(
                part.standing >= 0.99 * least_other && part.standing > 0.5,
                "{shop}: exchange customer {} stands at {} against {least_other}",
                part.payer,
                part.standing
            );
        }
    }
}
