//! Rescore benchmark: fills a database with 100,000 agents (half ERC-8004 agents with feedback,
//! half agent contracts with ratings, every one paid four times), then times how long the writer
//! takes to rescore the 1,000 agents one batch touched, against the baseline of rescoring all of
//! them in the same run. Prints both, the per-agent cost of each and their ratio.
//!
//! Run with `scripts/bench-rescore` (or `cargo run --release --example rescore_bench --
//! [agents] [touched]`).

use agentindex_indexer::reputation::{ReputationRules, TokenRule};
use agentindex_indexer::store::{ChainContext, Store, contract_agent_key, erc8004_agent_key};
use alloy::primitives::{Address, U256};
use sqlx::sqlite::SqlitePoolOptions;
use sqlx::{QueryBuilder, Sqlite, SqlitePool};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

const CHAIN: u64 = 31_337;
/// Rows per INSERT while filling.
const ROWS: usize = 400;
/// Timed passes of the touched rescore; the fastest counts.
const PASSES: usize = 5;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>());
    let agents = args.next().transpose()?.unwrap_or(100_000);
    let touched = args.next().transpose()?.unwrap_or(1_000).min(agents);
    let dir = tempfile::tempdir()?;
    let url = format!("sqlite://{}", dir.path().join("rescore.db").display());
    let store = Store::open(&url).await?;
    let pool = SqlitePoolOptions::new()
        .max_connections(1)
        .connect(&url)
        .await?;
    let filling = Instant::now();
    let keys = fill(&pool, agents).await?;
    pool.close().await;
    println!(
        "filled {agents} agents ({} payments) in {:.1} s",
        agents * 4,
        filling.elapsed().as_secs_f64()
    );

    let usdc = token();
    let rules = ReputationRules {
        tokens: BTreeMap::from([(
            usdc,
            TokenRule {
                decimals: 6,
                dust: U256::from(1_000u64),
            },
        )]),
        ..ReputationRules::default()
    };
    let chain = Arc::new(ChainContext {
        chain_id: CHAIN,
        name: "bench".into(),
        identity: Some(registry()),
        rules: Arc::new(rules),
    });
    let writer = store.writer(4);

    let started = Instant::now();
    writer.rescore(chain.clone(), keys.clone()).await?;
    let all = started.elapsed();

    let step = agents / touched.max(1);
    let batch: Vec<String> = keys
        .iter()
        .step_by(step.max(1))
        .take(touched)
        .cloned()
        .collect();
    let mut fastest = Duration::MAX;
    for _ in 0..PASSES {
        let started = Instant::now();
        writer.rescore(chain.clone(), batch.clone()).await?;
        fastest = fastest.min(started.elapsed());
    }
    let per = |d: Duration, n: usize| d.as_secs_f64() * 1e6 / n as f64;
    println!(
        "rescore {touched} of {agents} agents: {:.1} ms (fastest of {PASSES}; {:.1} µs per agent)",
        fastest.as_secs_f64() * 1e3,
        per(fastest, touched)
    );
    println!(
        "baseline, rescore all {agents}: {:.2} s ({:.1} µs per agent)",
        all.as_secs_f64(),
        per(all, agents)
    );
    println!(
        "ratio: the touched batch takes {:.2}% of a full rescore ({:.2}x the per-agent cost)",
        100.0 * fastest.as_secs_f64() / all.as_secs_f64(),
        per(fastest, touched) / per(all, agents)
    );
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM agent_reputation")
        .fetch_one(store.reader())
        .await?;
    anyhow::ensure!(
        stored as usize == agents,
        "{stored} rows stored for {agents} agents"
    );
    store.close().await;
    Ok(())
}

fn registry() -> Address {
    Address::repeat_byte(0x80)
}

fn token() -> Address {
    Address::repeat_byte(0x0c)
}

fn address(kind: u8, n: usize) -> Address {
    let mut bytes = [0u8; 20];
    bytes[0] = kind;
    bytes[12..].copy_from_slice(&(n as u64).to_be_bytes());
    Address::from(bytes)
}

fn hex(a: &Address) -> String {
    format!("{a:#x}")
}

/// One agent's rows.
struct Agent {
    key: String,
    erc8004: bool,
    n: usize,
    block: i64,
}

/// Writes `count` agents with their facts; returns their keys.
async fn fill(pool: &SqlitePool, count: usize) -> anyhow::Result<Vec<String>> {
    let agents: Vec<Agent> = (0..count)
        .map(|n| {
            let erc8004 = n % 2 == 0;
            let key = if erc8004 {
                erc8004_agent_key(CHAIN, &registry(), &U256::from(n))
            } else {
                contract_agent_key(CHAIN, &address(0xa0, n))
            };
            Agent {
                key,
                erc8004,
                n,
                block: (n / 10) as i64 + 1,
            }
        })
        .collect();
    let last_block = agents.last().map_or(1, |a| a.block) + 4 * 1_000;
    let time = |block: i64| 1_700_000_000 + 12 * block;
    let mut tx = pool.begin().await?;
    let blocks: Vec<i64> = (1..=last_block).collect();
    for chunk in blocks.chunks(ROWS) {
        let mut q = QueryBuilder::<Sqlite>::new(
            "INSERT INTO events (chain_id, block_number, log_index, block_hash, block_timestamp,
               tx_hash, address, source, topics, data) ",
        );
        q.push_values(chunk, |mut row, block| {
            row.push_bind(CHAIN as i64)
                .push_bind(*block)
                .push_bind(0)
                .push_bind("0x")
                .push_bind(time(*block))
                .push_bind("0x")
                .push_bind("0x")
                .push_bind("bench")
                .push_bind("[]")
                .push_bind(Vec::<u8>::new());
        });
        q.build().execute(&mut *tx).await?;
    }
    for chunk in agents.chunks(ROWS) {
        let mut q = QueryBuilder::<Sqlite>::new(
            "INSERT INTO agents (agent_key, chain_id, source, address, registry, token_id, owner,
               operators, active, registered_block, registered_at, last_event_block) ",
        );
        q.push_values(chunk, |mut row, a| {
            let (source, contract, reg, token) = if a.erc8004 {
                (
                    "erc8004",
                    None,
                    Some(hex(&registry())),
                    Some(a.n.to_string()),
                )
            } else {
                ("factory", Some(hex(&address(0xa0, a.n))), None, None)
            };
            row.push_bind(&a.key)
                .push_bind(CHAIN as i64)
                .push_bind(source)
                .push_bind(contract)
                .push_bind(reg)
                .push_bind(token)
                .push_bind(hex(&address(0x0e, a.n)))
                .push_bind("[]")
                .push_bind(true)
                .push_bind(a.block)
                .push_bind(time(a.block))
                .push_bind(a.block);
        });
        q.build().execute(&mut *tx).await?;

        let (tokens, contracts): (Vec<&Agent>, Vec<&Agent>) = chunk.iter().partition(|a| a.erc8004);
        if !tokens.is_empty() {
            let mut q = QueryBuilder::<Sqlite>::new(
                "INSERT INTO identity_registrations (chain_id, registry, token_id, owner, uri,
                   block_number, log_index, tx_hash, timestamp) ",
            );
            q.push_values(&tokens, |mut row, a| {
                row.push_bind(CHAIN as i64)
                    .push_bind(hex(&registry()))
                    .push_bind(a.n.to_string())
                    .push_bind(hex(&address(0x0e, a.n)))
                    .push_bind("ipfs://bench")
                    .push_bind(a.block)
                    .push_bind(a.n as i64)
                    .push_bind("0x")
                    .push_bind(time(a.block));
            });
            q.build().execute(&mut *tx).await?;
            let feedback: Vec<(&Agent, usize)> =
                tokens.iter().flat_map(|a| [(*a, 0), (*a, 1)]).collect();
            let mut q = QueryBuilder::<Sqlite>::new(
                "INSERT INTO feedback (chain_id, registry, token_id, client, feedback_index, value,
                   value_decimals, tag1, tag2, endpoint, feedback_uri, feedback_hash, shape,
                   block_number, log_index, tx_hash, timestamp) ",
            );
            q.push_values(&feedback, |mut row, (a, k)| {
                let block = a.block + 500 * (*k as i64 + 1);
                row.push_bind(CHAIN as i64)
                    .push_bind(hex(&registry()))
                    .push_bind(a.n.to_string())
                    .push_bind(hex(&address(0xc1, (a.n + k) % 997)))
                    .push_bind(1)
                    .push_bind(((a.n * 7 + k) % 100).to_string())
                    .push_bind(0)
                    .push_bind("quality")
                    .push_bind("")
                    .push_bind("")
                    .push_bind("")
                    .push_bind("0x")
                    .push_bind("v2")
                    .push_bind(block)
                    .push_bind((a.n * 2 + k) as i64)
                    .push_bind("0x")
                    .push_bind(time(block));
            });
            q.build().execute(&mut *tx).await?;
        }
        if !contracts.is_empty() {
            let mut q = QueryBuilder::<Sqlite>::new(
                "INSERT INTO agent_contract_events (chain_id, agent, kind, value, block_number,
                   log_index, timestamp) ",
            );
            q.push_values(&contracts, |mut row, a| {
                row.push_bind(CHAIN as i64)
                    .push_bind(hex(&address(0xa0, a.n)))
                    .push_bind("owner")
                    .push_bind(hex(&address(0x0e, a.n)))
                    .push_bind(a.block)
                    .push_bind(a.n as i64)
                    .push_bind(time(a.block));
            });
            q.build().execute(&mut *tx).await?;
            let mut q = QueryBuilder::<Sqlite>::new(
                "INSERT INTO ratings (chain_id, agent, rater, score, block_number, log_index, timestamp) ",
            );
            q.push_values(&contracts, |mut row, a| {
                let block = a.block + 700;
                row.push_bind(CHAIN as i64)
                    .push_bind(hex(&address(0xa0, a.n)))
                    .push_bind(hex(&address(0xc1, a.n % 997)))
                    .push_bind((a.n % 101) as i64)
                    .push_bind(block)
                    .push_bind(a.n as i64)
                    .push_bind(time(block));
            });
            q.build().execute(&mut *tx).await?;
        }
        let payments: Vec<(&Agent, usize)> = chunk
            .iter()
            .flat_map(|a| (0..4).map(move |k| (a, k)))
            .collect();
        let mut q = QueryBuilder::<Sqlite>::new(
            "INSERT INTO payments (chain_id, block_number, log_index, agent_key, tx_hash, token,
               payer, payee, amount, eip3009, timestamp) ",
        );
        q.push_values(&payments, |mut row, (a, k)| {
            let block = a.block + 1_000 * (*k as i64 + 1);
            let payee = if a.erc8004 {
                address(0x0e, a.n)
            } else {
                address(0xa0, a.n)
            };
            row.push_bind(CHAIN as i64)
                .push_bind(block)
                .push_bind((a.n * 4 + k) as i64)
                .push_bind(&a.key)
                .push_bind("0x")
                .push_bind(hex(&token()))
                .push_bind(hex(&address(0xb0, (a.n * 31 + k * 17) % 5_000)))
                .push_bind(hex(&payee))
                .push_bind(((k + 1) * 250_000).to_string())
                .push_bind(k % 2 == 0)
                .push_bind(time(block));
        });
        q.build().execute(&mut *tx).await?;
    }
    tx.commit().await?;
    Ok(agents.into_iter().map(|a| a.key).collect())
}
