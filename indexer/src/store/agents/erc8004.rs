//! Current state of ERC-8004 agents: owner, URI, agentWallet and operators, from the Identity
//! Registry's facts. A set of token ids is recomputed with one query per fact table.

use super::{AgentRow, Position, push_in, wallet_from_metadata, write};
use crate::primitives::AgentKey;
use crate::sources::hex_address;
use crate::store::decode::int;
use crate::store::sql::{fetch_packed_in_chain_order, packed_rows};
use crate::store::{StoreError, StoreResult};
use alloy::primitives::{Address, U256, hex};
use serde::de::DeserializeOwned;
use sqlx::{QueryBuilder, Sqlite, SqliteConnection};
use std::collections::{BTreeMap, BTreeSet};

/// What the facts of one token say, folded in chain order.
#[derive(Debug, Default)]
struct TokenFacts {
    /// Owner, URI, position and timestamp of the first registration.
    registered: Option<(String, String, Position, i64)>,
    /// New owner and position of the latest transfer.
    transferred: Option<(String, Position)>,
    /// URI and position of the latest URI update.
    uri_updated: Option<(String, Position)>,
    /// Raw value and block of the latest agentWallet metadata.
    wallet: Option<(Vec<u8>, i64)>,
    /// Operator, whether approved, and position of the latest token approval.
    approval: Option<(String, bool, Position)>,
}

/// Recomputes the agents `tokens` of Identity Registry `registry`.
pub(super) async fn refresh(
    conn: &mut SqliteConnection,
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
        "hex(value)",
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
        match facts.get(id) {
            Some(token_facts) if token_facts.registered.is_some() => {
                computed.push(agent_row(key, &reg, id, token_facts))
            }
            _ => gone.push(key),
        }
    }
    let owners: BTreeSet<&str> = computed.iter().map(|a| a.owner.as_str()).collect();
    let operators = operators_for_all(conn, chain_id, &reg, owners).await?;
    for agent in &mut computed {
        if let Some(approved) = operators.get(&agent.owner) {
            agent.operators.extend(approved.iter().cloned());
            agent.operators.sort();
            agent.operators.dedup();
        }
    }
    write(conn, chain_id, &computed, &gone).await
}

/// The row of a registered token from its folded facts.
fn agent_row(key: String, registry: &str, id: &str, facts: &TokenFacts) -> AgentRow {
    let (first_owner, first_uri, registered, registered_at) =
        facts.registered.clone().expect("caller checked");
    let mut owner = first_owner;
    let mut uri = first_uri;
    let mut updated_block = registered.0;
    let mut transferred: Position = (0, 0);
    if let Some((to, at)) = &facts.transferred {
        owner = to.clone();
        transferred = *at;
        updated_block = updated_block.max(at.0);
    }
    if let Some((new_uri, at)) = &facts.uri_updated
        && *at > registered
    {
        uri = new_uri.clone();
        updated_block = updated_block.max(at.0);
    }
    let mut wallet = None;
    if let Some((value, block)) = &facts.wallet {
        wallet = wallet_from_metadata(value).map(|w| hex_address(&w));
        updated_block = updated_block.max(*block);
    }
    // The token's approved address holds until any later transfer clears it.
    let mut operators = Vec::new();
    if let Some((operator, true, at)) = &facts.approval
        && *at > transferred
    {
        operators.push(operator.clone());
    }
    AgentRow {
        key,
        source: "erc8004".into(),
        registry: Some(registry.to_string()),
        token_id: Some(id.to_string()),
        owner,
        operators,
        uri: Some(uri),
        payment_address: wallet.clone(),
        agent_wallet: wallet,
        active: true,
        registered_block: registered.0,
        registered_at,
        last_event_block: updated_block,
        ..AgentRow::default()
    }
}

/// Rows of `table` for `ids` of `registry`, in chain order: each row's block, log index and
/// `T`, which holds `token_id` and then `columns`. Every fact table has an index `{table}_token`
/// by (chain, registry, token), which the lookup names (see `store::sql`).
async fn of_tokens<T: DeserializeOwned>(
    conn: &mut SqliteConnection,
    chain_id: u64,
    registry: &str,
    ids: &[String],
    table: &str,
    columns: &str,
    extra: &str,
) -> StoreResult<Vec<(i64, i64, T)>> {
    let mut query = QueryBuilder::<Sqlite>::new(format!(
        "SELECT {} FROM {table} INDEXED BY {table}_token WHERE chain_id = ",
        packed_rows(&format!("token_id, {columns}"))
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
    conn: &mut SqliteConnection,
    chain_id: u64,
    registry: &str,
    owners: BTreeSet<&str>,
) -> StoreResult<BTreeMap<String, Vec<String>>> {
    let mut latest: BTreeMap<(String, String), bool> = BTreeMap::new();
    let owners: Vec<&str> = owners.into_iter().collect();
    for chunk in owners.chunks(super::AGENTS_PER_QUERY) {
        let mut query = QueryBuilder::<Sqlite>::new(format!(
            "SELECT {} FROM identity_approvals INDEXED BY identity_approvals_owner
             WHERE token_id IS NULL AND chain_id = ",
            packed_rows("owner, operator, approved")
        ));
        query.push_bind(int("chain_id", chain_id)?);
        query.push(" AND registry = ");
        query.push_bind(registry);
        query.push(" AND owner");
        push_in(&mut query, chunk.iter().copied());
        let rows: Vec<(i64, i64, (String, String, i64))> =
            fetch_packed_in_chain_order(conn, query, "reading operator approvals").await?;
        for (_, _, (owner, operator, approved)) in rows {
            latest.insert((owner, operator), approved != 0);
        }
    }
    let mut approved: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for ((owner, operator), on) in latest {
        if on {
            approved.entry(owner).or_default().push(operator);
        }
    }
    Ok(approved)
}
