//! Trust rank benchmark, in two parts.
//!
//! In memory: a payment graph of 100,000 agents and 1,000,000 payments (200,000 payers; most
//! pay one agent, a fifth pay several, agents' popularity skewed), then the time to build the
//! graph's edges and run the rank over it, against the baseline of computing every agent's plain
//! payment score from the same payments in the same run.
//!
//! With funding: the same rank with its payers grouped by who funded them (issue #32), from
//! generated funding transfers (hubs, rings of 16, unfunded payers), against the rank alone.
//!
//! In the store: 100,000 agents with 10 payments each in a database, rescored (which records
//! their counted payments), then the two halves of an epoch step: the rank read from the counted
//! payments, and the rescore of every paid agent under it. Then the step as batches at the tip
//! run it: whole in one settle (no rollout, the baseline), and spread by the default rollout (the
//! rank computed ahead, then a group of agents per settle), with the longest settle of each
//! against one block time.
//!
//! Run with `scripts/bench-trust` (or `cargo run --release --example trust_bench -- [agents]
//! [payments] [interval_blocks]`).

#[path = "support/agents.rs"]
mod agents;

use agentindex_indexer::reputation::trust::edges;
use agentindex_indexer::reputation::{
    FundingEdge, FundingParams, PaidEdge, PayerClusters, Payment, ScoreParams, TrustParams,
    payer_clusters, payment_score, trust_rank, with_next_moves,
};
use agentindex_indexer::store::{Store, StoreRead};
use alloy::primitives::{Address, B256, U256};
use sqlx::any::AnyPoolOptions;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Timed passes of each; the fastest counts.
const PASSES: usize = 3;

/// A small deterministic generator (SplitMix64), so every run builds the same graph.
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn address(n: u64) -> Address {
    let mut bytes = [0u8; 20];
    bytes[12..].copy_from_slice(&n.to_be_bytes());
    Address::from(bytes)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<u64>());
    let agents = args.next().transpose()?.unwrap_or(100_000);
    let payments = args.next().transpose()?.unwrap_or(1_000_000);
    let interval = args.next().transpose()?.unwrap_or(1_000);
    let payers = (payments / 5).max(1);
    let now = 1_800_000_000u64;
    let mut mix = Mix(0x7275_7374);
    let keys: Vec<String> = (0..agents).map(|n| format!("8453:agent-{n:06}")).collect();
    // Skewed popularity: the square of a uniform draw favours low agent numbers.
    let mut by_agent: BTreeMap<usize, Vec<Payment>> = BTreeMap::new();
    let mut flat: Vec<(usize, Address, u64)> = Vec::with_capacity(payments as usize);
    for i in 0..payments {
        let payer = mix.below(payers);
        let broad = payer.is_multiple_of(5);
        let agent = if broad {
            let u = mix.below(1 << 16) as f64 / 65_536.0;
            (u * u * agents as f64) as u64
        } else {
            // A narrow payer keeps paying the same agent.
            payer.wrapping_mul(2_654_435_761) % agents
        };
        let timestamp = now - mix.below(180 * 86_400);
        let payer = address(payer + 1);
        flat.push((agent as usize, payer, timestamp));
        by_agent.entry(agent as usize).or_default().push(Payment {
            payer,
            payee: address(1 << 40 | agent),
            token: Address::repeat_byte(0xdc),
            amount: U256::from(1_000_000u64),
            block: i,
            log_index: 0,
            tx_hash: B256::ZERO,
            timestamp,
            x402: true,
        });
    }
    println!(
        "graph: {agents} agents, {payments} payments, {payers} payers ({} agents paid)",
        by_agent.len()
    );
    let params = ScoreParams::default();
    let trust = TrustParams::default();

    let mut baseline = Duration::MAX;
    let mut sum = 0.0;
    for _ in 0..PASSES {
        let started = Instant::now();
        sum = by_agent
            .values()
            .map(|paid| payment_score(paid, &[], now, &params, None).score)
            .sum::<f64>();
        baseline = baseline.min(started.elapsed());
    }
    let mut full = Duration::MAX;
    let mut rank = None;
    for _ in 0..PASSES {
        let started = Instant::now();
        let graph = graph_of(flat.as_slice(), &keys, now, &params);
        let computed = trust_rank(&graph, &BTreeMap::new(), &trust, &PayerClusters::default());
        full = full.min(started.elapsed());
        rank = Some((graph.len(), computed));
    }
    let (edge_count, rank) = rank.expect("at least one pass");
    anyhow::ensure!(rank.seeded, "the generated graph has broad payers");
    let trusted = rank.agents.values().filter(|a| a.relative > 0.0).count();
    println!(
        "baseline, payment score of every paid agent: {:.0} ms (fastest of {PASSES}; checksum {sum:.0})",
        baseline.as_secs_f64() * 1e3
    );
    println!(
        "trust rank, full: {:.0} ms (fastest of {PASSES}; {edge_count} edges, {} iterations, {trusted} agents trusted, {} payers with standing)",
        full.as_secs_f64() * 1e3,
        rank.iterations,
        rank.standing.values().filter(|s| **s > 0.0).count()
    );
    println!(
        "ratio: the rank takes {:.2}x the payment scores' time",
        full.as_secs_f64() / baseline.as_secs_f64()
    );
    with_funding(&flat, &keys, &mut mix, payers, now, full)?;
    in_the_store(
        agents as usize,
        (payments / agents.max(1)) as usize,
        interval,
    )
    .await
}

/// The payment graph's edges as of `now` from the generated payments `(agent, payer, time)`.
fn graph_of(
    flat: &[(usize, Address, u64)],
    keys: &[String],
    now: u64,
    params: &ScoreParams,
) -> Vec<PaidEdge> {
    edges(
        flat.iter().map(|(a, p, t)| (keys[*a].as_str(), *p, *t)),
        now,
        params.half_life_secs,
    )
}

/// The same rank with its payers grouped by who funded them (issue #32): 40% of the payers
/// funded by 40 exchange-like hubs, 10% by ring funders of 16 wallets each (half of them
/// through an intermediate wallet), the rest by no one; each transfer's next move found among
/// the payments and the transfers, the clusters computed and the rank run with them, against
/// `plain`, the rank's time without them measured above.
fn with_funding(
    flat: &[(usize, Address, u64)],
    keys: &[String],
    mix: &mut Mix,
    payers: u64,
    now: u64,
    plain: Duration,
) -> anyhow::Result<()> {
    let funding_edge = |funder: Address, funded: Address, block: u64, log_index: u64| FundingEdge {
        funder,
        funded,
        block,
        log_index,
        next_block: 0,
        token: Address::repeat_byte(0xdc),
        amount: U256::from(5_000_000u64),
    };
    let mut funding = Vec::new();
    for payer in 0..payers {
        let funded = address(payer + 1);
        let block = mix.below(1_000);
        match payer % 10 {
            0..=3 => funding.push(funding_edge(
                address((1 << 50) | (payer % 40)),
                funded,
                block,
                payer,
            )),
            4 => {
                let ring_funder = address((1 << 51) | (payer / 160));
                if payer % 20 == 4 {
                    let middle = address((1 << 52) | payer);
                    funding.push(funding_edge(ring_funder, middle, block, payer));
                    funding.push(funding_edge(middle, funded, block + 1, payer));
                } else {
                    funding.push(funding_edge(ring_funder, funded, block, payer));
                }
            }
            _ => {}
        }
    }
    let params = ScoreParams::default();
    let trust = TrustParams::default();
    let funding_params = FundingParams::default();
    // Each payment's block, as the epoch reads them beside the funding transfers: the payers
    // pay from block 1,000 on, so a transfer joins its accounts when the payment follows it
    // within the window.
    let paid: Vec<(Address, u64)> = flat
        .iter()
        .enumerate()
        .map(|(i, (_, payer, _))| (*payer, 1_000 + i as u64 % 500))
        .collect();
    let mut timed = Duration::MAX;
    let mut result = None;
    for _ in 0..PASSES {
        let started = Instant::now();
        let graph = graph_of(flat, keys, now, &params);
        let graph_payers: BTreeSet<Address> = graph.iter().map(|e| e.payer).collect();
        let edges = with_next_moves(funding.clone(), &paid);
        let clusters = payer_clusters(&edges, &graph_payers, |_, _| false, &funding_params);
        let rank = trust_rank(&graph, &BTreeMap::new(), &trust, &clusters);
        timed = timed.min(started.elapsed());
        result = Some((clusters, rank));
    }
    let (clusters, rank) = result.expect("at least one pass");
    anyhow::ensure!(rank.seeded, "the funded graph still has broad payers");
    println!(
        "trust rank with funding clusters: {:.0} ms (fastest of {PASSES}; {} iterations, {} funding transfers, {} payers in {} clusters, {} hubs, {} payers funded by a hub, {} payers with standing)",
        timed.as_secs_f64() * 1e3,
        rank.iterations,
        funding.len(),
        clusters.of.len(),
        clusters.of.values().collect::<BTreeSet<_>>().len(),
        clusters.hubs.len(),
        clusters.sources.len(),
        rank.standing.values().filter(|s| **s > 0.0).count()
    );
    println!(
        "ratio: with funding clusters the rank takes {:.2}x its time without (issue #32: at most 1.5x)",
        timed.as_secs_f64() / plain.as_secs_f64()
    );
    Ok(())
}

/// The epoch step on a database of `agents` agents with `per_agent` payments each.
async fn in_the_store(agents: usize, per_agent: usize, interval: u64) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let url = format!("sqlite://{}", dir.path().join("trust.db").display());
    let store = Store::open(&url).await?;
    let pool = AnyPoolOptions::new()
        .max_connections(1)
        .connect(&url)
        .await?;
    let keys = agents::fill_paid(&pool, agents, false, per_agent).await?;
    pool.close().await;
    let rules = agents::rules();
    let chain = Arc::new(agents::chain_context(rules.clone()));
    let writer = store.writer(4);
    // The first rescore records every agent's counted payments, as the indexer's does.
    writer.rescore(chain.clone(), keys.clone()).await?;
    let started = Instant::now();
    let (rank, _) = store
        .trust_rank(agents::CHAIN, u64::MAX / 2, &rules)
        .await?;
    let ranked = started.elapsed();
    let started = Instant::now();
    writer.rescore(chain.clone(), keys).await?;
    let rescored = started.elapsed();
    println!(
        "in the store, {agents} agents and {} payments: rank from the counted payments {:.0} ms ({} agents ranked), rescore of every paid agent with its counted payments recorded {:.0} ms",
        agents * per_agent,
        ranked.as_secs_f64() * 1e3,
        rank.agents.len(),
        rescored.as_secs_f64() * 1e3
    );
    epoch_steps(&writer, &rules, interval).await?;
    let (transfers, clustered) = fund_the_payers(&url).await?;
    let started = Instant::now();
    let (funded_rank, _) = store
        .trust_rank(agents::CHAIN, u64::MAX / 2, &rules)
        .await?;
    let funded = started.elapsed();
    println!(
        "in the store with {transfers} funding transfers ({clustered} payers in clusters): rank {:.0} ms against {:.0} ms without, {:.2}x (issue #32: at most 1.5x)",
        funded.as_secs_f64() * 1e3,
        ranked.as_secs_f64() * 1e3,
        funded.as_secs_f64() / ranked.as_secs_f64()
    );
    println!(
        "  the epoch found {} payers in clusters ({clustered} funded as rings of 16), {} hubs",
        funded_rank.clusters.of.len(),
        funded_rank.clusters.hubs.len()
    );
    anyhow::ensure!(
        funded_rank.clusters.of.len() >= clustered,
        "the rings were not found"
    );
    store.close().await;
    Ok(())
}

/// Base's block time: the pace the rollout's blocks come at.
const BLOCK_TIME: Duration = Duration::from_secs(2);

/// The epoch step as the batches at the tip run it, settled through `writer`: first whole (no
/// rollout: the rank computed and every paid agent rescored in the batch that crosses the epoch,
/// the baseline), then with the shipped rollout (the rank computed ahead while the chain moves
/// on at Base's pace until it is stored, then one group of agents per settle). Prints the
/// longest settle of each against one block time.
async fn epoch_steps(
    writer: &agentindex_indexer::store::Writer,
    rules: &agentindex_indexer::reputation::ReputationRules,
    interval: u64,
) -> anyhow::Result<()> {
    // The synthetic payments end near block 1,000 x their count per agent; epochs past them.
    let first = 30 * interval;
    let mut whole = rules.clone();
    whole.trust.interval_blocks = interval;
    whole.trust.rollout_blocks = 0;
    let at_once = Arc::new(agents::chain_context(whole));
    writer.settle_reputation(at_once.clone(), first).await?;
    let started = Instant::now();
    writer.settle_reputation(at_once, first + interval).await?;
    let step = started.elapsed();
    println!(
        "epoch step without a rollout: {:.2} s for the batch that crosses an epoch; {:.2} ms per batch on average with one epoch every {interval} blocks",
        step.as_secs_f64(),
        step.as_secs_f64() * 1e3 / interval as f64
    );

    let mut rolled = rules.clone();
    rolled.trust.interval_blocks = interval;
    let params = rolled.trust.clone();
    let rolling = Arc::new(agents::chain_context(rolled));
    let epoch = first + 2 * interval;
    // Every agent under the previous epoch's rank, as the chain leaves it just before.
    writer.settle_reputation(rolling.clone(), epoch - 1).await?;
    let started = Instant::now();
    writer.settle_reputation(rolling.clone(), epoch).await?;
    let mut settles = vec![(epoch, started.elapsed())];
    // The chain moves on while the rank is computed ahead, then the rank is stored.
    tokio::time::sleep(BLOCK_TIME * u32::try_from(params.store_lag())?).await;
    let block = epoch + params.store_lag();
    let started = Instant::now();
    writer.settle_reputation(rolling.clone(), block).await?;
    settles.push((block, started.elapsed()));
    for group in 0..agentindex_indexer::reputation::ROLLOUT_GROUPS {
        let block = epoch + params.switch_lag(group);
        let started = Instant::now();
        writer.settle_reputation(rolling.clone(), block).await?;
        settles.push((block, started.elapsed()));
    }
    // The previous rank dropped, the block after the last group went over.
    let block = epoch + params.switch_lag(agentindex_indexer::reputation::ROLLOUT_GROUPS - 1) + 1;
    let started = Instant::now();
    writer.settle_reputation(rolling.clone(), block).await?;
    settles.push((block, started.elapsed()));
    let (slowest_block, slowest) = settles
        .iter()
        .max_by_key(|(_, took)| *took)
        .copied()
        .unwrap_or_default();
    let total: Duration = settles.iter().map(|(_, took)| *took).sum();
    let mut groups: Vec<Duration> = settles[2..settles.len() - 1]
        .iter()
        .map(|(_, took)| *took)
        .collect();
    groups.sort();
    println!(
        "  settles: at the epoch {:.0} ms, the rank stored {:.0} ms, the groups' median {:.0} ms and longest {:.0} ms, the previous rank dropped {:.0} ms; ranks taken from the computation ahead: {}",
        settles[0].1.as_secs_f64() * 1e3,
        settles[1].1.as_secs_f64() * 1e3,
        groups[groups.len() / 2].as_secs_f64() * 1e3,
        groups.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
        settles[settles.len() - 1].1.as_secs_f64() * 1e3,
        rolling.ranks_ahead.used()
    );
    println!(
        "epoch step with a rollout over {} blocks in {} groups: longest settle {:.0} ms (block {slowest_block}), {:.2} s over {} settles; the longest is {:.2}x one block time ({} s), and {:.2}x the step without a rollout",
        params.rollout_blocks,
        agentindex_indexer::reputation::ROLLOUT_GROUPS,
        slowest.as_secs_f64() * 1e3,
        total.as_secs_f64(),
        settles.len(),
        slowest.as_secs_f64() / BLOCK_TIME.as_secs_f64(),
        BLOCK_TIME.as_secs(),
        slowest.as_secs_f64() / step.as_secs_f64()
    );
    Ok(())
}

/// Writes a funding transfer into every payer of the store at `url`, in the block before its
/// first payment, as the indexer keeps them: a tenth of the payers filled by ring funders of
/// 16 wallets each, four tenths by 16 exchange-like hubs, the rest by accounts of their own.
/// Returns the transfers written and the payers the rings hold.
async fn fund_the_payers(url: &str) -> anyhow::Result<(usize, usize)> {
    let pool = AnyPoolOptions::new()
        .max_connections(1)
        .connect(url)
        .await?;
    let first_paid: Vec<(String, i64)> = sqlx::query_as(
        "SELECT payer, min(block_number) FROM counted_payments GROUP BY payer ORDER BY payer",
    )
    .fetch_all(&pool)
    .await?;
    let mut in_rings = 0;
    for (chunk_index, chunk) in first_paid.chunks(2_000).enumerate() {
        let mut insert = sqlx::QueryBuilder::<sqlx::Any>::new(
            "INSERT INTO funding_edges (chain_id, block_number, log_index, token, funder, funded, amount, paid_block) ",
        );
        let rows: Vec<(usize, &(String, i64))> = chunk
            .iter()
            .enumerate()
            .map(|(i, row)| (chunk_index * 2_000 + i, row))
            .collect();
        insert.push_values(&rows, |mut row, (n, (payer, block))| {
            let funder = match n % 10 {
                0 => address((1 << 51) | (*n as u64 / 160)),
                1..=4 => address((1 << 50) | (*n as u64 % 40)),
                _ => address((1 << 52) | *n as u64),
            };
            row.push_bind(agents::CHAIN as i64)
                .push_bind((*block - 1).max(0))
                .push_bind(*n as i64)
                .push_bind(format!("{:#x}", agents::token()))
                .push_bind(format!("{funder:#x}"))
                .push_bind(payer.clone())
                .push_bind("5000000")
                .push_bind(*block);
        });
        insert.build().execute(&pool).await?;
        in_rings += rows.iter().filter(|(n, _)| n % 10 == 0).count();
    }
    pool.close().await;
    Ok((first_paid.len(), in_rings))
}
