//! Synthetic agents for the benchmarks: `count` agents written straight into a database, half
//! ERC-8004 agents with feedback, half agent contracts with ratings, each paid four times, each
//! with the activity the writer's activity stage keeps for it, and optionally the profile,
//! skills and search row their documents would give (`documents`).

#![allow(dead_code)]

use agentindex_indexer::primitives::AgentKey;
use agentindex_indexer::reputation::{ReputationRules, TokenRule};
use agentindex_indexer::store::{ChainContext, Dialect, Store};
use alloy::primitives::{Address, U256};
use sqlx::any::AnyPoolOptions;
use sqlx::{Any, AnyPool, QueryBuilder};
use std::collections::BTreeMap;
use std::sync::Arc;

#[path = "agent_documents.rs"]
mod documents;
use documents::{profiles, registration_uri};

/// The chain the agents are on.
pub(crate) const CHAIN: u64 = 31_337;
/// Rows per INSERT while filling.
const ROWS: usize = 400;
/// Words skills and tags are named from.
pub(crate) const WORDS: [&str; 24] = [
    "translate",
    "summarize",
    "forecast",
    "search",
    "classify",
    "transcribe",
    "caption",
    "route",
    "price",
    "audit",
    "review",
    "schedule",
    "negotiate",
    "trade",
    "monitor",
    "extract",
    "rank",
    "recommend",
    "detect",
    "generate",
    "answer",
    "plan",
    "verify",
    "index",
];

/// Reputation rules with the payment token the agents are paid in.
pub(crate) fn rules() -> ReputationRules {
    ReputationRules {
        tokens: BTreeMap::from([(
            token(),
            TokenRule {
                decimals: 6,
                dust: U256::from(1_000u64),
            },
        )]),
        ..ReputationRules::default()
    }
}

/// The chain context batches and rescoring of these agents use.
pub(crate) fn chain_context(rules: ReputationRules) -> ChainContext {
    ChainContext {
        chain_id: CHAIN,
        name: "bench".into(),
        identity: Some(registry()),
        rules: Arc::new(rules),
        funding_lookback: 2_000,
        ranks_ahead: Default::default(),
    }
}

pub(crate) fn registry() -> Address {
    Address::repeat_byte(0x80)
}

pub(crate) fn token() -> Address {
    Address::repeat_byte(0x0c)
}

/// The owner of agent `n`.
pub(crate) fn owner(n: usize) -> Address {
    address(0x0e, n)
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

impl Agent {
    /// The block of its `k`th feedback (ERC-8004 agents get two).
    fn feedback_block(&self, k: usize) -> i64 {
        self.block + 500 * (k as i64 + 1)
    }

    /// The block of its newest fact the activity stage counts (`agent_activity.last_block`):
    /// its own event, or for an ERC-8004 agent its last feedback (it has no metadata or
    /// revocations). Its time is that block's.
    fn last_active_block(&self) -> i64 {
        if self.erc8004 {
            self.feedback_block(1)
        } else {
            self.block
        }
    }
}

/// Runs a statement built with `?` parameters on SQLite or PostgreSQL.
async fn run(conn: &mut sqlx::AnyConnection, q: QueryBuilder<'_, Any>) -> anyhow::Result<()> {
    Dialect::of(conn).portable(q).build().execute(conn).await?;
    Ok(())
}

/// Opens (creating and migrating) the store at `url` and [`fill`]s it through a connection of
/// its own; returns the store and the agents' keys.
pub(crate) async fn open_filled(
    url: &str,
    count: usize,
    documents: bool,
) -> anyhow::Result<(Store, Vec<String>)> {
    let store = Store::open(url).await?;
    let pool = AnyPoolOptions::new()
        .max_connections(1)
        .connect(url)
        .await?;
    let keys = fill(&pool, count, documents).await?;
    pool.close().await;
    Ok((store, keys))
}

/// Opens a store [`open_filled`] loaded earlier; returns it and its agents' keys.
pub(crate) async fn open_loaded(url: &str) -> anyhow::Result<(Store, Vec<String>)> {
    let store = Store::open(url).await?;
    let keys = sqlx::query_scalar("SELECT agent_key FROM agents")
        .fetch_all(store.reader())
        .await?;
    Ok((store, keys))
}

/// Scores every agent as the indexer does when it starts under rules it has not recorded
/// (adopting them: rows scored and written in the current form, the rules recorded), which is
/// what the indexer leaves behind. `keys` must be every agent of the chain.
pub(crate) async fn score(store: &Store, keys: &[String]) -> anyhow::Result<()> {
    let rescored = store
        .writer(4)
        .adopt_rules(Arc::new(chain_context(rules())))
        .await?;
    anyhow::ensure!(
        rescored as usize >= keys.len(),
        "adopting the rules rescored {rescored} agents of {}",
        keys.len()
    );
    Ok(())
}

/// The indexed block of the agents' chain in `store`.
pub(crate) async fn indexed_block(store: &Store) -> anyhow::Result<u64> {
    use agentindex_indexer::store::StoreRead;
    let progress = store.progress(CHAIN).await?;
    let next = progress.map_or(1, |p| p.next_block);
    Ok(next.saturating_sub(1))
}

/// Stores the reputation feeds at `blocks` with the indexer's feed keeper, as it leaves an index
/// it followed (it stores the final epoch boundaries as it passes them).
pub(crate) async fn store_feeds(store: &Store, blocks: &[u64]) -> anyhow::Result<()> {
    use agentindex_indexer::feed::keeper::FeedKeeper;
    let context = Arc::new(chain_context(rules()));
    let contexts = Arc::new(BTreeMap::from([(CHAIN, Arc::clone(&context))]));
    let kept = u32::try_from(blocks.len())?;
    let keeper = FeedKeeper::new(store.clone(), store.writer(2), contexts, kept);
    let (_running, stop) = tokio::sync::watch::channel(false);
    for &block in blocks {
        keeper.store_at(&context, block, &stop).await?;
    }
    Ok(())
}

/// Writes `count` agents with their facts; returns their keys.
pub(crate) async fn fill(
    pool: &AnyPool,
    count: usize,
    documents: bool,
) -> anyhow::Result<Vec<String>> {
    fill_paid(pool, count, documents, 4).await
}

/// [`fill`] with `per_agent` payments to each agent (from 5,000 payers).
pub(crate) async fn fill_paid(
    pool: &AnyPool,
    count: usize,
    documents: bool,
    per_agent: usize,
) -> anyhow::Result<Vec<String>> {
    let agents: Vec<Agent> = (0..count)
        .map(|n| {
            let erc8004 = n % 2 == 0;
            let key = if erc8004 {
                AgentKey::erc8004(CHAIN, registry(), U256::from(n)).to_string()
            } else {
                AgentKey::contract(CHAIN, address(0xa0, n)).to_string()
            };
            Agent {
                key,
                erc8004,
                n,
                block: (n / 10) as i64 + 1,
            }
        })
        .collect();
    let last_block = agents.last().map_or(1, |a| a.block) + per_agent as i64 * 1_000;
    let time = |block: i64| 1_700_000_000 + 12 * block;
    let mut tx = pool.begin().await?;
    let blocks: Vec<i64> = (1..=last_block).collect();
    for chunk in blocks.chunks(ROWS) {
        let mut q = QueryBuilder::<Any>::new(
            "INSERT INTO events (chain_id, block_number, log_index, block_hash, block_timestamp,
               tx_hash, address, source, topics, data) ",
        );
        q.push_values(chunk, |mut row, block| {
            row.push_bind(CHAIN as i64)
                .push_bind(*block)
                .push_bind(0)
                .push_bind(vec![0u8; 32])
                .push_bind(time(*block))
                .push_bind(vec![0u8; 32])
                .push_bind(vec![0u8; 20])
                .push_bind("bench")
                .push_bind(Vec::<u8>::new())
                .push_bind(Vec::<u8>::new());
        });
        run(&mut tx, q).await?;
    }
    for chunk in agents.chunks(ROWS) {
        let mut q = QueryBuilder::<Any>::new(
            "INSERT INTO agents (agent_key, chain_id, source, address, registry, token_id, owner,
               operators, uri, active, registered_block, registered_at, last_event_block) ",
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
                .push_bind(a.erc8004.then(|| registration_uri(a.n)))
                .push_bind(1_i64)
                .push_bind(a.block)
                .push_bind(time(a.block))
                .push_bind(a.block);
        });
        run(&mut tx, q).await?;
        let mut q = QueryBuilder::<Any>::new(
            "INSERT INTO agent_activity (agent_key, chain_id, last_block, updated_at) ",
        );
        q.push_values(chunk, |mut row, a| {
            row.push_bind(&a.key)
                .push_bind(CHAIN as i64)
                .push_bind(a.last_active_block())
                .push_bind(time(a.last_active_block()));
        });
        run(&mut tx, q).await?;

        let (tokens, contracts): (Vec<&Agent>, Vec<&Agent>) = chunk.iter().partition(|a| a.erc8004);
        if !tokens.is_empty() {
            let mut q = QueryBuilder::<Any>::new(
                "INSERT INTO identity_registrations (chain_id, registry, token_id, owner, uri,
                   block_number, log_index, tx_hash, timestamp) ",
            );
            q.push_values(&tokens, |mut row, a| {
                row.push_bind(CHAIN as i64)
                    .push_bind(hex(&registry()))
                    .push_bind(a.n.to_string())
                    .push_bind(hex(&address(0x0e, a.n)))
                    .push_bind(registration_uri(a.n))
                    .push_bind(a.block)
                    .push_bind(a.n as i64)
                    .push_bind("0x")
                    .push_bind(time(a.block));
            });
            run(&mut tx, q).await?;
            let feedback: Vec<(&Agent, usize)> =
                tokens.iter().flat_map(|a| [(*a, 0), (*a, 1)]).collect();
            let mut q = QueryBuilder::<Any>::new(
                "INSERT INTO feedback (chain_id, registry, token_id, client, feedback_index, value,
                   value_decimals, tag1, tag2, endpoint, feedback_uri, feedback_hash, shape,
                   block_number, log_index, tx_hash, timestamp) ",
            );
            q.push_values(&feedback, |mut row, (a, k)| {
                let block = a.feedback_block(*k);
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
                    .push_bind(format!("{:#066x}", 0))
                    .push_bind("v2")
                    .push_bind(block)
                    .push_bind((a.n * 2 + k) as i64)
                    .push_bind("0x")
                    .push_bind(time(block));
            });
            run(&mut tx, q).await?;
        }
        if !contracts.is_empty() {
            let mut q = QueryBuilder::<Any>::new(
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
            run(&mut tx, q).await?;
            let mut q = QueryBuilder::<Any>::new(
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
            run(&mut tx, q).await?;
        }
        let payments: Vec<(&Agent, usize)> = chunk
            .iter()
            .flat_map(|a| (0..per_agent).map(move |k| (a, k)))
            .collect();
        // 1,600 payments per statement, under SQLite's limit on bound values.
        for payments in payments.chunks(ROWS * 4) {
            let mut q = QueryBuilder::<Any>::new(
                "INSERT INTO payments (chain_id, block_number, log_index, agent_key, tx_hash, token,
                   payer, payee, amount, eip3009, scheme, timestamp) ",
            );
            q.push_values(payments, |mut row, (a, k)| {
                let block = a.block + 1_000 * (*k as i64 + 1);
                let payee = if a.erc8004 {
                    address(0x0e, a.n)
                } else {
                    address(0xa0, a.n)
                };
                row.push_bind(CHAIN as i64)
                    .push_bind(block)
                    .push_bind((a.n * per_agent + k) as i64)
                    .push_bind(&a.key)
                    .push_bind(format!("{:#066x}", a.n * per_agent + k))
                    .push_bind(hex(&token()))
                    .push_bind(hex(&address(0xb0, (a.n * 31 + k * 17) % 5_000)))
                    .push_bind(hex(&payee))
                    .push_bind(((k + 1) * 250_000).to_string())
                    .push_bind(i64::from(k % 2 == 0))
                    .push_bind((k % 2 == 0).then_some("eip3009"))
                    .push_bind(time(block));
            });
            run(&mut tx, q).await?;
        }
    }
    if documents {
        for chunk in agents.chunks(ROWS) {
            profiles(&mut tx, chunk).await?;
        }
    }
    // Indexed, final and settled up to the last block, as an index that followed the chain
    // would be: feeds, `/status` and subscription replays see the blocks above.
    sqlx::query(
        "INSERT INTO chain_cursor (chain_id, name, indexed_block, finalized_block, head_block,
           settled_block) VALUES ($1, 'bench', $2, $2, $2, $2)",
    )
    .bind(CHAIN as i64)
    .bind(last_block)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(agents.into_iter().map(|a| a.key).collect())
}
