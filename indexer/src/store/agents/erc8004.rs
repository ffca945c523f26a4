//! Current state of ERC-8004 agents: owner, URI, agentWallet and operators, from the Identity
//! Registry's facts. A set of token ids is recomputed with one query per fact table.

use super::{push_in, write};
use crate::agents::erc8004::{
    Registration, TokenFacts, add_operators_for_all, erc8004_agent,
    operators_for_all as fold_operators,
};
use crate::primitives::AgentKey;
use crate::schema::{
    identity_approvals, identity_metadata, identity_registrations, identity_transfers,
    identity_uri_updates,
};
use crate::sources::hex_address;
use crate::store::Dialect;
use crate::store::decode::int;
use crate::store::identity_rows::{ApprovalRow, OperatorForAllRow};
use crate::store::packed_row::{PackedRow, PerDialect, packed_row};
use crate::store::sql::{fetch_packed_in_chain_order, packed_rows};
use crate::store::{StoreError, StoreResult};
use alloy::primitives::{Address, U256, hex};
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

    let rows: Vec<(i64, i64, RegisteredRow)> =
        of_tokens(conn, chain_id, &reg, &ids, identity_registrations::NAME, "").await?;
    for (block, log, row) in rows {
        let entry = facts.entry(row.token_id).or_default();
        if entry.registered.is_none() {
            entry.registered = Some(Registration {
                owner: row.owner,
                uri: row.uri,
                at: (block, log),
                timestamp: row.timestamp,
            });
        }
    }
    let rows: Vec<(i64, i64, TransferRow)> =
        of_tokens(conn, chain_id, &reg, &ids, identity_transfers::NAME, "").await?;
    for (block, log, row) in rows {
        facts.entry(row.token_id).or_default().transferred = Some((row.to_address, (block, log)));
    }
    let rows: Vec<(i64, i64, UriUpdateRow)> =
        of_tokens(conn, chain_id, &reg, &ids, identity_uri_updates::NAME, "").await?;
    for (block, log, row) in rows {
        facts.entry(row.token_id).or_default().uri_updated = Some((row.uri, (block, log)));
    }
    let rows: Vec<(i64, i64, WalletRow)> = of_tokens(
        conn,
        chain_id,
        &reg,
        &ids,
        identity_metadata::NAME,
        "AND key = 'agentWallet'",
    )
    .await?;
    for (block, _, row) in rows {
        let value = hex::decode(&row.value_hex).map_err(|error| StoreError::Corrupt {
            what: format!("agentWallet metadata of token {}", row.token_id),
            reason: error.to_string(),
        })?;
        facts.entry(row.token_id).or_default().wallet = Some((value, block));
    }
    let rows: Vec<(i64, i64, ApprovalRow)> =
        of_tokens(conn, chain_id, &reg, &ids, identity_approvals::NAME, "").await?;
    for (block, log, row) in rows {
        facts.entry(row.token_id).or_default().approval =
            Some((row.operator, row.approved != 0, (block, log)));
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

packed_row! {
    /// A token's registration (`identity_registrations`).
    struct RegisteredRow {
        token_id: String = identity_registrations::token_id,
        owner: String = identity_registrations::owner,
        uri: String = identity_registrations::uri,
        timestamp: i64 = identity_registrations::timestamp,
    }
}

packed_row! {
    /// A token changing owner (`identity_transfers`).
    struct TransferRow {
        token_id: String = identity_transfers::token_id,
        to_address: String = identity_transfers::to_address,
    }
}

packed_row! {
    /// A token's registration file moving (`identity_uri_updates`).
    struct UriUpdateRow {
        token_id: String = identity_uri_updates::token_id,
        uri: String = identity_uri_updates::uri,
    }
}

packed_row! {
    /// A metadata entry of a token (`identity_metadata`), its value in hex (a BLOB cannot be
    /// packed into JSON).
    struct WalletRow {
        token_id: String = identity_metadata::token_id,
        value_hex: String = PerDialect(|dialect| dialect.hex(identity_metadata::value.name)),
    }
}

/// Rows of `table` for `ids` of `registry` as `T` (whose fields select from `table`), in chain
/// order: each row's block, log index and `T`. Every fact table has an index `{table}_token` by
/// (chain, registry, token), which the lookup names (see `store::sql`).
async fn of_tokens<T: PackedRow>(
    conn: &mut AnyConnection,
    chain_id: u64,
    registry: &str,
    ids: &[String],
    table: &str,
    extra: &str,
) -> StoreResult<Vec<(i64, i64, T)>> {
    let dialect = Dialect::of(conn);
    let mut query = QueryBuilder::<Any>::new(format!(
        "SELECT {} FROM {table}{} WHERE chain_id = ",
        packed_rows::<T>(dialect),
        dialect.index_hint(&format!("{table}_token")),
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
    let dialect = Dialect::of(conn);
    for chunk in owners.chunks(super::AGENTS_PER_QUERY) {
        let mut query = QueryBuilder::<Any>::new(format!(
            "SELECT {} FROM {}{} WHERE token_id IS NULL AND chain_id = ",
            packed_rows::<OperatorForAllRow>(dialect),
            identity_approvals::NAME,
            dialect.index_hint("identity_approvals_owner"),
        ));
        query.push_bind(int("chain_id", chain_id)?);
        query.push(" AND registry = ");
        query.push_bind(registry);
        query.push(" AND owner");
        push_in(&mut query, chunk.iter().copied());
        let rows: Vec<(i64, i64, OperatorForAllRow)> =
            fetch_packed_in_chain_order(conn, query, "reading operator approvals").await?;
        approvals.extend(
            rows.into_iter()
                .map(|(_, _, row)| (row.owner, row.operator, row.approved != 0)),
        );
    }
    Ok(fold_operators(approvals))
}
