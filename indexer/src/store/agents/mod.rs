//! Current state of agents, recomputed from their facts: this reads the facts and writes the
//! rows; the folds themselves are the pure functions of `crate::agents`.
//!
//! The `agents` row is a pure function of the fact tables, so the same code serves both a new
//! batch (refresh what it touched) and a reorg (refresh what the undone facts touched), and the
//! result is what a fresh index of the same chain would hold. Agents are recomputed as a set: a
//! few queries per few hundred agents, never a round of queries per agent.

mod contracts;
mod erc8004;
mod masumi;
mod masumi_payments;
mod touched;

use super::facts::Touched;
use super::in_list::push_in;
use super::sql::delete_agent_rows;
use super::{QueryContext, StoreResult};
use crate::agents::AgentState;
use crate::schema::agents;
use crate::sources::hex_address;
use crate::store::Dialect;
use crate::store::decode::{self, int};
use crate::store::sql::write_rows;
use alloy::primitives::{Address, U256};
use sqlx::{Any, AnyConnection, QueryBuilder};
use std::collections::BTreeMap;

/// Agents recomputed per round of queries (each binds one parameter per agent).
const AGENTS_PER_QUERY: usize = 500;

pub use crate::agents::wallet_from_metadata;
pub(super) use touched::touched_above;

/// Recomputes every agent in `touched`: rows are replaced, and agents whose facts are gone
/// (undone by a reorg) are removed.
pub(super) async fn refresh(
    conn: &mut AnyConnection,
    chain_id: u64,
    mut touched: Touched,
) -> StoreResult<()> {
    for (registry, owner) in std::mem::take(&mut touched.owners) {
        for token in tokens_of_owner(conn, chain_id, &registry, &owner).await? {
            touched.erc8004.insert((registry, token));
        }
    }
    let mut by_registry: BTreeMap<Address, Vec<U256>> = BTreeMap::new();
    for (registry, token) in &touched.erc8004 {
        by_registry.entry(*registry).or_default().push(*token);
    }
    for (registry, tokens) in by_registry {
        for chunk in tokens.chunks(AGENTS_PER_QUERY) {
            erc8004::refresh(conn, chain_id, &registry, chunk).await?;
        }
    }
    let contracts: Vec<Address> = touched.contracts.into_iter().collect();
    for chunk in contracts.chunks(AGENTS_PER_QUERY) {
        contracts::refresh(conn, chain_id, chunk).await?;
    }
    let masumi: Vec<String> = touched.masumi.into_iter().collect();
    for chunk in masumi.chunks(AGENTS_PER_QUERY) {
        masumi::refresh(conn, chain_id, chunk).await?;
    }
    let escrows: Vec<String> = touched.escrows.into_iter().collect();
    for chunk in escrows.chunks(AGENTS_PER_QUERY) {
        masumi_payments::refresh(conn, chain_id, chunk).await?;
    }
    Ok(())
}

/// Every ERC-8004 agent `owner` holds in `registry`, for operator changes.
async fn tokens_of_owner(
    conn: &mut AnyConnection,
    chain_id: u64,
    registry: &Address,
    owner: &Address,
) -> StoreResult<Vec<U256>> {
    let ids: Vec<String> = sqlx::query_scalar(&format!(
        "SELECT token_id FROM {agents_table} WHERE chain_id = $1 AND source = 'erc8004' AND registry = $2 AND owner = $3",
        agents_table = agents::NAME,
    ))
    .bind(int("chain_id", chain_id)?)
    .bind(hex_address(registry))
    .bind(hex_address(owner))
    .fetch_all(&mut *conn)
    .await
    .context("listing an owner's agents")?;
    ids.iter()
        .map(|id| decode::parse(agents::NAME, "token_id", id))
        .collect()
}

/// The rows of Cardano fact `table` whose `key` column is one of `keys`, `columns` of each, in
/// chain order within each key: what the Masumi folds read.
async fn cardano_facts_of<T>(
    conn: &mut AnyConnection,
    table: &str,
    key: &str,
    columns: &str,
    keys: &[String],
    context: &'static str,
) -> StoreResult<Vec<T>>
where
    T: for<'r> sqlx::FromRow<'r, sqlx::any::AnyRow> + Send + Unpin,
{
    let mut read =
        QueryBuilder::<Any>::new(format!("SELECT {key}, {columns} FROM {table} WHERE {key}"));
    push_in(&mut read, keys.iter().map(String::as_str));
    read.push(format!(" ORDER BY {key}, block_number, tx_index, position"));
    Dialect::of(conn)
        .portable(read)
        .build_query_as()
        .fetch_all(&mut *conn)
        .await
        .context(context)
}

/// Replaces the rows of `computed` and deletes the agents of `gone`.
async fn write(
    conn: &mut AnyConnection,
    chain_id: u64,
    computed: &[AgentState],
    gone: &[String],
) -> StoreResult<()> {
    delete_agent_rows(
        conn,
        agents::NAME,
        gone,
        "removing agents whose facts are gone",
    )
    .await?;
    if computed.is_empty() {
        return Ok(());
    }
    let columns = agents::TABLE.column_list();
    let mut insert = QueryBuilder::<Any>::new(format!("INSERT INTO {} ({columns}) ", agents::NAME));
    let chain = int("chain_id", chain_id)?;
    insert.push_values(computed, |mut row, agent| {
        row.push_bind(&agent.key)
            .push_bind(chain)
            .push_bind(&agent.source)
            .push_bind(&agent.address)
            .push_bind(&agent.registry)
            .push_bind(&agent.token_id)
            .push_bind(&agent.owner)
            .push_bind(serde_json::to_string(&agent.operators).expect("strings serialise"))
            .push_bind(&agent.uri)
            .push_bind(&agent.agent_wallet)
            .push_bind(&agent.payment_address)
            .push_bind(&agent.card)
            .push_bind(&agent.card_uri)
            .push_bind(&agent.card_hash)
            .push_bind(&agent.name)
            .push_bind(&agent.description)
            .push_bind(i64::from(agent.active))
            .push_bind(agent.heartbeat_interval)
            .push_bind(agent.last_heartbeat)
            .push_bind(&agent.registry_status)
            .push_bind(agent.registered_block)
            .push_bind(agent.registered_at)
            .push_bind(agent.last_event_block);
    });
    insert.push(crate::store::sql::or_replace("agent_key", &columns));
    write_rows(
        conn,
        insert,
        computed.len(),
        AGENTS_PER_QUERY,
        "writing recomputed agents",
    )
    .await?;
    Ok(())
}
