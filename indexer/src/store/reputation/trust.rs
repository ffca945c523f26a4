//! The stored trust ranks of each chain: the counted payments every rescore leaves behind (the
//! payment graph), and the rank computed from them as of an epoch block (a multiple of
//! `[reputation.trust] interval_blocks`), stored by epoch: a chain keeps the ranks kept at its
//! settled block, one or, while a new one goes into force group by group, two
//! (`reputation/rollout.rs` says which, `in_force.rs` keeps them so, `trust_inputs.rs` reads
//! them for the agents).
//!
//! The rank as of epoch `E` is a pure function of the payments counted at or before `E` and of
//! the time of the newest indexed block at or before `E`, so a reorg above `E` leaves it as it
//! is, one below `E` drops it, and a fresh index holds the same rank for the same epoch.

use super::clusters;
use crate::primitives::sql_bound;
use crate::reputation::{
    AgentTrust, Payment, ReputationRules, TrustRank, trust::EdgeSums, trust_rank,
};
use crate::schema::{
    counted_payments, events, payment_bindings, trust_agents, trust_clusters, trust_epochs,
    trust_payers,
};
use crate::sources::hex_address;
use crate::store::Dialect;
use crate::store::decode::{self, int};
use crate::store::in_list::push_in;
use crate::store::sql::write_rows;
use crate::store::{QueryContext, StoreResult};
use alloy::primitives::Address;
use futures::TryStreamExt;
use sqlx::{Any, AnyConnection, QueryBuilder};
use std::collections::{BTreeMap, BTreeSet};

/// Rows per INSERT statement.
const ROWS_PER_INSERT: usize = 2_000;

/// Replaces the counted payments of `keys` with `counted` (each agent's payments that count).
pub(super) async fn write_counted(
    conn: &mut AnyConnection,
    chain_id: u64,
    keys: &[String],
    counted: &BTreeMap<String, Vec<Payment>>,
) -> StoreResult<()> {
    let mut delete = QueryBuilder::<Any>::new(format!(
        "DELETE FROM {counted_payments_table} WHERE chain_id = ",
        counted_payments_table = counted_payments::NAME,
    ));
    delete.push_bind(int("chain_id", chain_id)?);
    delete.push(" AND agent_key");
    push_in(&mut delete, keys);
    Dialect::of(conn)
        .portable(delete)
        .build()
        .execute(&mut *conn)
        .await
        .context("clearing counted payments")?;
    let rows: Vec<(&str, &Payment)> = counted
        .iter()
        .flat_map(|(key, payments)| payments.iter().map(move |p| (key.as_str(), p)))
        .collect();
    let chain = int("chain_id", chain_id)?;
    for chunk in rows.chunks(ROWS_PER_INSERT) {
        let numbers = chunk
            .iter()
            .map(|(_, p)| {
                Ok([
                    int("block_number", p.block)?,
                    int("log_index", p.log_index)?,
                    int("timestamp", p.timestamp)?,
                ])
            })
            .collect::<StoreResult<Vec<_>>>()?;
        let columns = counted_payments::TABLE.column_list();
        let mut insert = QueryBuilder::<Any>::new(format!(
            "INSERT INTO {} ({columns}) ",
            counted_payments::NAME
        ));
        insert.push_values(chunk.iter().zip(numbers), |mut row, ((key, p), n)| {
            row.push_bind(chain)
                .push_bind(*key)
                .push_bind(n[0])
                .push_bind(n[1])
                .push_bind(hex_address(&p.payer))
                .push_bind(n[2]);
        });
        insert.push(crate::store::sql::or_replace(
            "chain_id, agent_key, block_number, log_index",
            &columns,
        ));
        write_rows(
            conn,
            insert,
            chunk.len(),
            ROWS_PER_INSERT,
            "writing counted payments",
        )
        .await?;
    }
    Ok(())
}

/// The epochs of the chain's stored ranks, each with whether any seed held trust in it.
pub(super) async fn stored_epochs(
    conn: &mut AnyConnection,
    chain_id: u64,
) -> StoreResult<BTreeMap<u64, bool>> {
    let rows: Vec<(i64, i64)> = sqlx::query_as(&format!(
        "SELECT block_number, seeded FROM {trust_epochs_table} WHERE chain_id = $1",
        trust_epochs_table = trust_epochs::NAME,
    ))
    .bind(int("chain_id", chain_id)?)
    .fetch_all(&mut *conn)
    .await
    .context("reading the stored trust epochs")?;
    rows.into_iter()
        .map(|(block, seeded)| {
            Ok((
                decode::uint(trust_epochs::NAME, "block_number", block)?,
                seeded != 0,
            ))
        })
        .collect()
}

/// The chain's trust rank as of `epoch`, and the time it is computed at (the newest indexed
/// block at or before `epoch` that holds an event).
pub(super) async fn compute(
    conn: &mut AnyConnection,
    chain_id: u64,
    epoch: u64,
    rules: &ReputationRules,
) -> StoreResult<(TrustRank, u64)> {
    let chain = int("chain_id", chain_id)?;
    let timestamp: Option<i64> = sqlx::query_scalar(&format!(
        "SELECT block_timestamp FROM {events_table} WHERE chain_id = $1 AND block_number <= $2
         ORDER BY block_number DESC LIMIT 1",
        events_table = events::NAME,
    ))
    .bind(chain)
    .bind(sql_bound(epoch))
    .fetch_optional(&mut *conn)
    .await
    .context("reading the time of a trust epoch")?;
    let timestamp = decode::uint(events::NAME, "block_timestamp", timestamp.unwrap_or(0))?;
    // The payments are read as a stream and summed as they come, so an epoch holds one entry
    // per agent and payer, one per payer, and the blocks that payers some funding transfer
    // funded paid in (all the funding clusters read), not every payment of the chain's history.
    let transfers = clusters::transfers_as_of(conn, chain_id, epoch).await?;
    let funded: BTreeSet<Address> = transfers.iter().map(|t| t.funded).collect();
    let mut sums = EdgeSums::new(timestamp, rules.params.half_life_secs);
    let mut payers: BTreeSet<Address> = BTreeSet::new();
    let mut paid: BTreeSet<(Address, u64)> = BTreeSet::new();
    {
        let table = counted_payments::NAME;
        let sql = format!(
            "SELECT agent_key, payer, timestamp, block_number FROM {table}
             WHERE chain_id = $1 AND block_number <= $2 ORDER BY agent_key, block_number, log_index"
        );
        let mut rows = sqlx::query_as::<_, (String, String, i64, i64)>(&sql)
            .bind(chain)
            .bind(sql_bound(epoch))
            .fetch(&mut *conn);
        while let Some((agent, payer, at, block)) =
            rows.try_next().await.context("reading the payment graph")?
        {
            let payer = decode::parse::<Address>(table, "payer", &payer)?;
            sums.add(&agent, payer, decode::uint(table, "timestamp", at)?);
            let block = decode::uint(table, "block_number", block)?;
            payers.insert(payer);
            if funded.contains(&payer) {
                paid.insert((payer, block));
            }
        }
    }
    let paid: Vec<(Address, u64)> = paid.into_iter().collect();
    let clusters = clusters::from_transfers(transfers, &paid, &payers, rules);
    let graph = sums.into_edges();
    let addresses = payment_addresses(conn, chain_id, epoch).await?;
    Ok((
        trust_rank(&graph, &addresses, &rules.trust, &clusters),
        timestamp,
    ))
}

/// Each address bound to an agent as of `epoch`, to the first of its agents by key.
async fn payment_addresses(
    conn: &mut AnyConnection,
    chain_id: u64,
    epoch: u64,
) -> StoreResult<BTreeMap<Address, String>> {
    let rows: Vec<(String, String)> = sqlx::query_as(&format!(
        "SELECT agent_key, address FROM {payment_bindings_table} WHERE chain_id = $1 AND block_number <= $2
         ORDER BY block_number, log_index",
        payment_bindings_table = payment_bindings::NAME,
    ))
    .bind(int("chain_id", chain_id)?)
    .bind(sql_bound(epoch))
    .fetch_all(&mut *conn)
    .await
    .context("reading payment bindings for the trust rank")?;
    let mut current: BTreeMap<String, String> = BTreeMap::new();
    for (agent, address) in rows {
        current.insert(agent, address);
    }
    let mut out: BTreeMap<Address, String> = BTreeMap::new();
    for (agent, address) in current {
        // An empty address unbinds; the agents are visited in key order, so the first wins.
        if address.is_empty() {
            continue;
        }
        let address = decode::parse(payment_bindings::NAME, "address", &address)?;
        out.entry(address).or_insert(agent);
    }
    Ok(out)
}

/// Stores `rank` as the chain's rank as of `epoch` (at `timestamp`); none is stored for that
/// epoch yet.
pub(super) async fn store(
    conn: &mut AnyConnection,
    chain_id: u64,
    epoch: u64,
    timestamp: u64,
    rank: &TrustRank,
) -> StoreResult<()> {
    let chain = int("chain_id", chain_id)?;
    let epoch_block = int("epoch", epoch)?;
    let agents: Vec<(&String, &AgentTrust)> = rank.agents.iter().collect();
    for chunk in agents.chunks(ROWS_PER_INSERT) {
        let mut insert = QueryBuilder::<Any>::new(format!(
            "INSERT INTO {trust_agents_table} (agent_key, chain_id, epoch_block, relative, top_payers) ",
            trust_agents_table = trust_agents::NAME,
        ));
        insert.push_values(chunk, |mut row, (key, trust)| {
            row.push_bind(key.as_str())
                .push_bind(chain)
                .push_bind(epoch_block)
                .push_bind(trust.relative)
                .push_bind(serde_json::to_string(&trust.top_payers).expect("payers serialise"));
        });
        write_rows(
            conn,
            insert,
            chunk.len(),
            ROWS_PER_INSERT,
            "writing agents' trust",
        )
        .await?;
    }
    let payers: Vec<(&Address, &f64)> = rank.standing.iter().filter(|(_, s)| **s > 0.0).collect();
    for chunk in payers.chunks(ROWS_PER_INSERT) {
        let mut insert = QueryBuilder::<Any>::new(format!(
            "INSERT INTO {trust_payers_table} (chain_id, epoch_block, address, standing) ",
            trust_payers_table = trust_payers::NAME,
        ));
        insert.push_values(chunk, |mut row, (address, standing)| {
            row.push_bind(chain)
                .push_bind(epoch_block)
                .push_bind(hex_address(address))
                .push_bind(**standing);
        });
        write_rows(
            conn,
            insert,
            chunk.len(),
            ROWS_PER_INSERT,
            "writing payers' standing",
        )
        .await?;
    }
    clusters::write(conn, chain, epoch_block, &rank.clusters).await?;
    sqlx::query(&format!(
        "INSERT INTO {trust_epochs_table} (chain_id, block_number, timestamp, seeded) VALUES ($1, $2, $3, $4)",
        trust_epochs_table = trust_epochs::NAME,
    ))
    .bind(chain)
    .bind(epoch_block)
    .bind(int("timestamp", timestamp)?)
    .bind(i64::from(rank.seeded))
    .execute(&mut *conn)
    .await
    .context("recording the trust epoch")?;
    Ok(())
}

/// Drops the chain's stored rank as of `epoch`.
pub(super) async fn forget(conn: &mut AnyConnection, chain_id: u64, epoch: u64) -> StoreResult<()> {
    for (table, column) in [
        (trust_agents::NAME, "epoch_block"),
        (trust_payers::NAME, "epoch_block"),
        (trust_clusters::NAME, "epoch_block"),
        (trust_epochs::NAME, "block_number"),
    ] {
        sqlx::query(&format!(
            "DELETE FROM {table} WHERE chain_id = $1 AND {column} = $2"
        ))
        .bind(int("chain_id", chain_id)?)
        .bind(int("epoch", epoch)?)
        .execute(&mut *conn)
        .await
        .context("dropping a trust rank no longer in force")?;
    }
    Ok(())
}

/// Every agent of `chain_id` with a counted payment: those whose score a new epoch can move.
pub(super) async fn paid_agents(
    conn: &mut AnyConnection,
    chain_id: u64,
) -> StoreResult<BTreeSet<String>> {
    let keys: Vec<String> = sqlx::query_scalar(&format!(
        "SELECT DISTINCT agent_key FROM {counted_payments_table} WHERE chain_id = $1",
        counted_payments_table = counted_payments::NAME,
    ))
    .bind(int("chain_id", chain_id)?)
    .fetch_all(&mut *conn)
    .await
    .context("listing the paid agents")?;
    Ok(keys.into_iter().collect())
}
