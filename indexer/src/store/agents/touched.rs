//! Which agents the facts above a block name, read before a reorg deletes those facts so that
//! the agents can be recomputed from what remains (`stages/agents.rs`).

use crate::schema::{
    agent_contract_events, agent_snapshots, identity_approvals, identity_metadata,
    identity_registrations, identity_transfers, identity_uri_updates, masumi_escrow_actions,
    masumi_registry_actions, registry_events, watched_agents,
};
use crate::store::decode::{self, int};
use crate::store::facts::Touched;
use crate::store::{QueryContext, StoreResult};
use alloy::primitives::{Address, U256};
use sqlx::AnyConnection;

/// An ERC-8004 token a fact row names.
#[derive(sqlx::FromRow)]
struct TokenRow {
    registry: String,
    token_id: String,
}

/// An `identity_approvals` row: a token's approval, or (no token) an operator for all.
#[derive(sqlx::FromRow)]
struct ApprovalRow {
    registry: String,
    owner: String,
    token_id: Option<String>,
}

/// Agents with facts above `ancestor`, gathered before those facts are deleted.
pub(in crate::store) async fn touched_above(
    conn: &mut AnyConnection,
    chain_id: u64,
    ancestor: u64,
) -> StoreResult<Touched> {
    let mut touched = Touched::default();
    let (chain, above) = (int("chain_id", chain_id)?, int("ancestor", ancestor)?);
    for table in [
        identity_registrations::NAME,
        identity_transfers::NAME,
        identity_uri_updates::NAME,
        identity_metadata::NAME,
    ] {
        let rows: Vec<TokenRow> = sqlx::query_as(&format!(
            "SELECT DISTINCT registry, token_id FROM {table} WHERE chain_id = $1 AND block_number > $2"
        ))
        .bind(chain)
        .bind(above)
        .fetch_all(&mut *conn)
        .await
        .context("finding ERC-8004 agents above a reorg")?;
        for row in rows {
            touched.erc8004.insert((
                decode::parse(table, "registry", &row.registry)?,
                decode::parse(table, "token_id", &row.token_id)?,
            ));
        }
    }
    let approvals: Vec<ApprovalRow> = sqlx::query_as(&format!(
        "SELECT DISTINCT registry, owner, token_id FROM {identity_approvals_table} WHERE chain_id = $1 AND block_number > $2",
        identity_approvals_table = identity_approvals::NAME,
    ))
    .bind(chain)
    .bind(above)
    .fetch_all(&mut *conn)
    .await
    .context("finding approvals above a reorg")?;
    let table = identity_approvals::NAME;
    for row in approvals {
        let registry: Address = decode::parse(table, "registry", &row.registry)?;
        // A token's approval touches that token; an operator's touches every agent of its owner.
        match decode::parse_opt::<U256>(table, "token_id", row.token_id.as_deref())? {
            Some(token) => touched.erc8004.insert((registry, token)),
            None => touched
                .owners
                .insert((registry, decode::parse(table, "owner", &row.owner)?)),
        };
    }
    for (table, column) in [
        (agent_contract_events::NAME, "agent"),
        (agent_snapshots::NAME, "agent"),
        (registry_events::NAME, "agent"),
        (watched_agents::NAME, "address"),
    ] {
        let rows: Vec<String> = sqlx::query_scalar(&format!(
            "SELECT DISTINCT {column} FROM {table} WHERE chain_id = $1 AND block_number > $2"
        ))
        .bind(chain)
        .bind(above)
        .fetch_all(&mut *conn)
        .await
        .context("finding agent contracts above a reorg")?;
        for address in rows {
            touched
                .contracts
                .insert(decode::parse(table, column, &address)?);
        }
    }
    touched.masumi = sqlx::query_scalar(&format!(
        "SELECT DISTINCT agent_key FROM {table} WHERE chain_id = $1 AND block_number > $2",
        table = masumi_registry_actions::NAME,
    ))
    .bind(chain)
    .bind(above)
    .fetch_all(&mut *conn)
    .await
    .context("finding Masumi agents above a rollback")?
    .into_iter()
    .collect();
    touched.escrows = sqlx::query_scalar(&format!(
        "SELECT DISTINCT escrow_key FROM {table} WHERE chain_id = $1 AND block_number > $2",
        table = masumi_escrow_actions::NAME,
    ))
    .bind(chain)
    .bind(above)
    .fetch_all(&mut *conn)
    .await
    .context("finding Masumi escrows above a rollback")?
    .into_iter()
    .collect();
    Ok(touched)
}
