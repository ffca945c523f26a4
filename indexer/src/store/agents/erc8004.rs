//! Current state of ERC-8004 agents: owner, URI, agentWallet and operators, from the Identity
//! Registry's facts. A set of token ids is recomputed with one query per fact table.

use super::{push_in, write};
use crate::agents::erc8004::{
    TokenFacts, add_operators_for_all, erc8004_agent, operators_for_all as fold_operators,
};
use crate::primitives::AgentKey;
use crate::sources::hex_address;
use crate::store::Dialect;
use crate::store::decode::int;
use crate::store::sql::{fetch_packed_in_chain_order, packed_rows};
use crate::store::{StoreError, StoreResult};
use alloy::primitives::{Address, U256, hex};
use serde::de::DeserializeOwned;
use sqlx::{Any, AnyConnection, QueryBuilder};
use std::collections::{BTreeMap, BTreeSet};

/// Recomputes the agents `tokens` of Identity Registry `registry`.
pub(super) async fn refresh(
    conn: &mut AnyConnection,
    chain_id: u64,
    registry: &Address,
    tokens: &[U256],
) -> StoreResult<()> {
    let reg = hex_address(registry);
    let ids: Vec<String> = tokens.iter().map(U256::to_string).collect();
    let mut facts: BTreeMap<String, TokenFacts> = BTreeMap::new();

    type Registration = (String, String, String, i64);
    let rows: Vec<(i64, i64, Registration)> = of_tokens(
        conn,
        chain_id,
        &reg,
        &ids,
        "identity_registrations",
        "owner, uri, timestamp",
        "",
    )
    .await?;
    for (block, log, (token, owner, uri, timestamp)) in rows {
        let entry = facts.entry(token).or_default();
        if entry.registered.is_none() {
            entry.registered = Some((owner, uri, (block, log), timestamp));
        }
    }
    let rows: Vec<(i64, i64, (String, String))> = of_tokens(
        conn,
        chain_id,
        &reg,
        &ids,
        "identity_transfers",
        "to_address",
        "",
    )
    .await?;
    for (block, log, (token, to)) in rows {
        facts.entry(token).or_default().transferred = Some((to, (block, log)));
    }
    let rows: Vec<(i64, i64, (String, String))> = of_tokens(
        conn,
        chain_id,
        &reg,
        &ids,
        "identity_uri_updates",
        "uri",
        "",
    )
    .await?;
    for (block, log, (token, uri)) in rows {
        facts.entry(token).or_default().uri_updated = Some((uri, (block, log)));
    }
    let rows: Vec<(i64, i64, (String, String))> = of_tokens(
        conn,
        chain_id,
        &reg,
        &ids,
        "identity_metadata",
        &Dialect::of(conn).hex("value"),
        "AND key = 'agentWallet'",
    )
    .await?;
    for (block, _, (token, value)) in rows {
        let value = hex::decode(&value).map_err(|error| StoreError::Corrupt {
            what: format!("agentWallet metadata of token {token}"),
            reason: error.to_string(),
        })?;
        facts.entry(token).or_default().wallet = Some((value, block));
    }
    let rows: Vec<(i64, i64, (String, String, i64))> = of_tokens(
        conn,
        chain_id,
        &reg,
        &ids,
        "identity_approvals",
        "operator, approved",
        "",
    )
    .await?;
    for (block, log, (token, operator, approved)) in rows {
        facts.entry(token).or_default().approval = Some((operator, approved != 0, (block, log)));
    }

    let mut computed = Vec::with_capacity(ids.len());
    let mut gone = Vec::new();
    for (id, token) in ids.iter().zip(tokens) {
        let key = AgentKey::erc8004(chain_id, *registry, *token).to_string();
        match facts
            .get(id)
            .and_then(|f| erc8004_agent(key.clone(), &reg, id, f))
        {
            Some(agent) => computed.push(agent),
            None => gone.push(key),
        }
    }
    let owners: BTreeSet<&str> = computed.iter().map(|a| a.owner.as_str()).collect();
    let operators = operators_for_all(conn, chain_id, &reg, owners).await?;
    for agent in &mut computed {
        if let Some(approved) = operators.get(&agent.owner) {
            add_operators_for_all(agent, approved);
        }
    }
    write(conn, chain_id, &computed, &gone).await
}

/// Rows of `table` for `ids` of `registry`, in chain order: each row's block, log index and
/// `T`, which holds `token_id` and then `columns`. Every fact table has an index `{table}_token`
/// by (chain, registry, token), which the lookup names (see `store::sql`).
async fn of_tokens<T: DeserializeOwned>(
    conn: &mut AnyConnection,
    chain_id: u64,
    registry: &str,
    ids: &[String],
    table: &str,
    columns: &str,
    extra: &str,
) -> StoreResult<Vec<(i64, i64, T)>> {
    let mut query = QueryBuilder::<Any>::new(format!(
        "SELECT {} FROM {table} INDEXED BY {table}_token WHERE chain_id = ",
        packed_rows(Dialect::of(conn), &format!("token_id, {columns}"))
    ));
    query.push_bind(int("chain_id", chain_id)?);
    query.push(" AND registry = ");
    query.push_bind(registry);
    query.push(format!(" {extra} AND token_id"));
    push_in(&mut query, ids);
    fetch_packed_in_chain_order(conn, query, "reading ERC-8004 agents' facts").await
}

/// Operators each of `owners` currently approves for all its tokens in `registry`.
async fn operators_for_all(
    conn: &mut AnyConnection,
    chain_id: u64,
    registry: &str,
    owners: BTreeSet<&str>,
) -> StoreResult<BTreeMap<String, Vec<String>>> {
    let mut approvals = Vec::new();
    let owners: Vec<&str> = owners.into_iter().collect();
    for chunk in owners.chunks(super::AGENTS_PER_QUERY) {
        let mut query = QueryBuilder::<Any>::new(format!(
            "SELECT {} FROM identity_approvals INDEXED BY identity_approvals_owner
             WHERE token_id IS NULL AND chain_id = ",
            packed_rows(Dialect::of(conn), "owner, operator, approved")
        ));
        query.push_bind(int("chain_id", chain_id)?);
        query.push(" AND registry = ");
        query.push_bind(registry);
        query.push(" AND owner");
        push_in(&mut query, chunk.iter().copied());
        let rows: Vec<(i64, i64, (String, String, i64))> =
            fetch_packed_in_chain_order(conn, query, "reading operator approvals").await?;
        approvals.extend(
            rows.into_iter()
                .map(|(_, _, (owner, operator, approved))| (owner, operator, approved != 0)),
        );
    }
    Ok(fold_operators(approvals))
}
