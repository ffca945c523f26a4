//! The stored trust rank of each chain: the counted payments every rescore leaves behind (the
//! payment graph), the rank computed from them as of the chain's epoch block (a multiple of
//! `[reputation.trust] interval_blocks`), and what it says about the agents being scored.
//!
//! The rank as of epoch `E` is a pure function of the payments counted at or before `E` and of
//! the time of the newest indexed block at or before `E`, so a reorg above `E` leaves it as it
//! is, one below `E` recomputes it at the earlier epoch, and a fresh index stopping at the same
//! block holds the same rank. When the epoch moves, every paid agent is rescored.

use super::clusters;
use super::load::Loaded;
use crate::primitives::sql_bound;
use crate::reputation::{
    AgentTrust, Payment, ReputationRules, TrustInputs, TrustRank, trust::edges, trust_rank,
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
use sqlx::{Any, AnyConnection, QueryBuilder};
use std::collections::{BTreeMap, BTreeSet};

/// Rows per INSERT statement.
const ROWS_PER_INSERT: usize = 2_000;
/// Addresses per IN list.
const ADDRESSES_PER_QUERY: usize = 5_000;

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

/// The epoch the chain's stored rank is computed as of, if it has one.
async fn stored_epoch(conn: &mut AnyConnection, chain_id: u64) -> StoreResult<Option<Epoch>> {
    let row: Option<(i64, i64)> = sqlx::query_as(&format!(
        "SELECT block_number, seeded FROM {trust_epochs_table} WHERE chain_id = $1",
        trust_epochs_table = trust_epochs::NAME,
    ))
    .bind(int("chain_id", chain_id)?)
    .fetch_optional(&mut *conn)
    .await
    .context("reading the trust epoch")?;
    row.map(|(block, seeded)| {
        Ok(Epoch {
            block: decode::uint(trust_epochs::NAME, "block_number", block)?,
            seeded: seeded != 0,
        })
    })
    .transpose()
}

/// A chain's stored epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Epoch {
    block: u64,
    seeded: bool,
}

/// Brings the chain's stored rank to the epoch of `head`; returns whether it moved (every paid
/// agent must then be rescored). `force` recomputes it even at the same epoch (new rules).
pub(super) async fn advance(
    conn: &mut AnyConnection,
    chain_id: u64,
    head: u64,
    rules: &ReputationRules,
    force: bool,
) -> StoreResult<bool> {
    let epoch = rules.trust.epoch_of(head);
    if !force && stored_epoch(conn, chain_id).await?.map(|e| e.block) == Some(epoch) {
        return Ok(false);
    }
    let started = std::time::Instant::now();
    let (rank, timestamp) = compute(conn, chain_id, epoch, rules).await?;
    store(conn, chain_id, epoch, timestamp, &rank).await?;
    tracing::info!(
        target: "agentindex::reputation",
        chain_id,
        epoch,
        agents = rank.agents.len(),
        payers = rank.standing.len(),
        iterations = rank.iterations,
        elapsed = ?started.elapsed(),
        "trust rank computed"
    );
    Ok(true)
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
    let rows: Vec<(String, String, i64, i64)> = sqlx::query_as(&format!(
        "SELECT agent_key, payer, timestamp, block_number FROM {counted_payments_table}
         WHERE chain_id = $1 AND block_number <= $2",
        counted_payments_table = counted_payments::NAME,
    ))
    .bind(chain)
    .bind(sql_bound(epoch))
    .fetch_all(&mut *conn)
    .await
    .context("reading the payment graph")?;
    let table = counted_payments::NAME;
    let payments = rows
        .iter()
        .map(|(agent, payer, at, block)| {
            Ok((
                agent.as_str(),
                decode::parse::<Address>(table, "payer", payer)?,
                decode::uint(table, "timestamp", *at)?,
                decode::uint(table, "block_number", *block)?,
            ))
        })
        .collect::<StoreResult<Vec<_>>>()?;
    let paid: Vec<(Address, u64)> = payments.iter().map(|p| (p.1, p.3)).collect();
    let clusters = clusters::as_of(conn, chain_id, epoch, &paid, rules).await?;
    let graph = edges(
        payments
            .into_iter()
            .map(|(agent, payer, at, _)| (agent, payer, at)),
        timestamp,
        rules.params.half_life_secs,
    );
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

/// Replaces the chain's stored rank with `rank`, as of `epoch` at `timestamp`.
async fn store(
    conn: &mut AnyConnection,
    chain_id: u64,
    epoch: u64,
    timestamp: u64,
    rank: &TrustRank,
) -> StoreResult<()> {
    let chain = int("chain_id", chain_id)?;
    for table in [trust_agents::NAME, trust_payers::NAME, trust_clusters::NAME] {
        sqlx::query(&format!("DELETE FROM {table} WHERE chain_id = $1"))
            .bind(chain)
            .execute(&mut *conn)
            .await
            .context("clearing the previous trust rank")?;
    }
    let agents: Vec<(&String, &AgentTrust)> = rank.agents.iter().collect();
    for chunk in agents.chunks(ROWS_PER_INSERT) {
        let mut insert = QueryBuilder::<Any>::new(format!(
            "INSERT INTO {trust_agents_table} (agent_key, chain_id, relative, top_payers) ",
            trust_agents_table = trust_agents::NAME,
        ));
        insert.push_values(chunk, |mut row, (key, trust)| {
            row.push_bind(key.as_str())
                .push_bind(chain)
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
            "INSERT INTO {trust_payers_table} (chain_id, address, standing) ",
            trust_payers_table = trust_payers::NAME,
        ));
        insert.push_values(chunk, |mut row, (address, standing)| {
            row.push_bind(chain)
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
    clusters::write(conn, chain, &rank.clusters).await?;
    sqlx::query(&format!(
        "INSERT INTO {trust_epochs_table} (chain_id, block_number, timestamp, seeded) VALUES ($1, $2, $3, $4)
         ON CONFLICT (chain_id) DO UPDATE SET block_number = excluded.block_number,
           timestamp = excluded.timestamp, seeded = excluded.seeded",
        trust_epochs_table = trust_epochs::NAME,
    ))
    .bind(chain)
    .bind(int("epoch", epoch)?)
    .bind(int("timestamp", timestamp)?)
    .bind(i64::from(rank.seeded))
    .execute(&mut *conn)
    .await
    .context("recording the trust epoch")?;
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

/// Fills in what the stored rank says about each loaded agent and its payers.
pub(super) async fn stored_inputs(
    conn: &mut AnyConnection,
    chain_id: u64,
    loaded: &mut BTreeMap<String, Loaded>,
    unproven_cap: f64,
) -> StoreResult<()> {
    let Some(epoch) = stored_epoch(conn, chain_id).await? else {
        return Ok(());
    };
    if !epoch.seeded {
        return Ok(());
    }
    let mut query = QueryBuilder::<Any>::new(format!(
        "SELECT agent_key, relative, top_payers FROM {trust_agents_table} WHERE agent_key",
        trust_agents_table = trust_agents::NAME,
    ));
    push_in(&mut query, loaded.keys());
    let rows: Vec<(String, f64, String)> = Dialect::of(conn)
        .portable(query)
        .build_query_as()
        .fetch_all(&mut *conn)
        .await
        .context("reading agents' trust")?;
    let mut agents: BTreeMap<String, AgentTrust> = BTreeMap::new();
    for (key, relative, top) in rows {
        let top_payers = decode::json(trust_agents::NAME, "top_payers", &top)?;
        agents.insert(
            key,
            AgentTrust {
                relative,
                top_payers,
            },
        );
    }
    let payers: BTreeSet<Address> = loaded
        .values()
        .flat_map(|l| l.facts.payments.iter().map(|p| p.payer))
        .collect();
    let standing = standing_of(conn, chain_id, &payers).await?;
    let clusters = clusters::of_payers(conn, chain_id, &payers).await?;
    for (key, entry) in loaded.iter_mut() {
        let of: BTreeMap<Address, f64> = entry
            .facts
            .payments
            .iter()
            .filter_map(|p| standing.get(&p.payer).map(|s| (p.payer, *s)))
            .collect();
        let clusters = entry
            .facts
            .payments
            .iter()
            .filter_map(|p| clusters.get(&p.payer).map(|m| (p.payer, m.clone())))
            .collect();
        entry.facts.trust = Some(TrustInputs {
            epoch_block: epoch.block,
            agent: agents.remove(key),
            standing: of,
            unproven_cap,
            clusters,
        });
    }
    Ok(())
}

/// The stored standing of `payers` (those with none are left out).
async fn standing_of(
    conn: &mut AnyConnection,
    chain_id: u64,
    payers: &BTreeSet<Address>,
) -> StoreResult<BTreeMap<Address, f64>> {
    let mut out = BTreeMap::new();
    let payers: Vec<String> = payers.iter().map(hex_address).collect();
    for chunk in payers.chunks(ADDRESSES_PER_QUERY) {
        let mut query = QueryBuilder::<Any>::new(format!(
            "SELECT address, standing FROM {trust_payers_table} WHERE chain_id = ",
            trust_payers_table = trust_payers::NAME,
        ));
        query.push_bind(int("chain_id", chain_id)?);
        query.push(" AND address");
        push_in(&mut query, chunk);
        let rows: Vec<(String, f64)> = Dialect::of(conn)
            .portable(query)
            .build_query_as()
            .fetch_all(&mut *conn)
            .await
            .context("reading payers' standing")?;
        for (address, standing) in rows {
            out.insert(
                decode::parse(trust_payers::NAME, "address", &address)?,
                standing,
            );
        }
    }
    Ok(out)
}

/// What `rank` (computed as of `epoch`) says about each loaded agent and its payers, for a feed
/// at a block whose epoch is not the stored one.
pub(super) fn inputs_from(
    rank: &TrustRank,
    epoch: u64,
    loaded: &mut BTreeMap<String, Loaded>,
    unproven_cap: f64,
) {
    if !rank.seeded {
        return;
    }
    for (key, entry) in loaded.iter_mut() {
        let standing = entry
            .facts
            .payments
            .iter()
            .filter_map(|p| {
                rank.standing
                    .get(&p.payer)
                    .filter(|s| **s > 0.0)
                    .map(|s| (p.payer, *s))
            })
            .collect();
        let clusters = entry
            .facts
            .payments
            .iter()
            .filter_map(|p| rank.clusters.membership(&p.payer).map(|m| (p.payer, m)))
            .collect();
        entry.facts.trust = Some(TrustInputs {
            epoch_block: epoch,
            agent: rank.agents.get(key).cloned(),
            standing,
            unproven_cap,
            clusters,
        });
    }
}

/// The epoch the chain's stored rank is at, if any (for the feed to reuse it).
pub(super) async fn epoch_block(
    conn: &mut AnyConnection,
    chain_id: u64,
) -> StoreResult<Option<u64>> {
    Ok(stored_epoch(conn, chain_id).await?.map(|e| e.block))
}
