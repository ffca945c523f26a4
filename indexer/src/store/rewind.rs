//! Undoing blocks: every fact above the common ancestor goes, and every agent those facts
//! touched is recomputed from what remains, their reputation too. This is the only place a reorg
//! changes the database.

use super::batch::ChainContext;
use super::decode::{self, int};
use super::facts::Touched;
use super::{Dialect, QueryContext, StoreResult};
use super::{agents, reputation, stored_feeds};
use crate::schema::{
    agent_contract_events, agent_snapshots, block_window, chain_cursor, counted_payments, events,
    feedback, feedback_responses, feedback_revocations, identity_approvals, identity_metadata,
    identity_registrations, identity_transfers, identity_uri_updates, outflows, payment_bindings,
    payments, ratings, registry_events, validation_requests, validation_responses, watched_agents,
    withdrawals, x402_channels,
};
use alloy::primitives::{Address, U256};
use sqlx::AnyConnection;

/// Every table whose rows are facts keyed by (chain_id, block_number, …).
pub(crate) const FACT_TABLES: [&str; 21] = [
    events::NAME,
    watched_agents::NAME,
    payment_bindings::NAME,
    identity_registrations::NAME,
    identity_transfers::NAME,
    identity_uri_updates::NAME,
    identity_metadata::NAME,
    identity_approvals::NAME,
    feedback::NAME,
    feedback_revocations::NAME,
    feedback_responses::NAME,
    validation_requests::NAME,
    validation_responses::NAME,
    agent_contract_events::NAME,
    agent_snapshots::NAME,
    registry_events::NAME,
    ratings::NAME,
    withdrawals::NAME,
    payments::NAME,
    outflows::NAME,
    x402_channels::NAME,
];

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
pub(super) async fn touched_above(
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
    Ok(touched)
}

/// Deletes every fact of `chain_id` above `ancestor` and recomputes the agents they touched.
pub(super) async fn rewind(
    conn: &mut AnyConnection,
    chain: &ChainContext,
    ancestor: u64,
) -> StoreResult<u64> {
    let chain_id = chain.chain_id;
    let (chain_key, above) = (int("chain_id", chain_id)?, int("ancestor", ancestor)?);
    let touched = touched_above(conn, chain_id, ancestor).await?;
    reputation::mark_dirty(conn, chain_id, ancestor + 1, u64::MAX).await?;
    let mut removed = 0;
    for table in FACT_TABLES {
        removed += sqlx::query(&format!(
            "DELETE FROM {table} WHERE chain_id = $1 AND block_number > $2"
        ))
        .bind(chain_key)
        .bind(above)
        .execute(&mut *conn)
        .await
        .context("deleting facts above a reorg")?
        .rows_affected();
    }
    // Counted payments are derived from the payments; the agents they belonged to are marked
    // and rescored below, which rewrites theirs.
    sqlx::query(&format!(
        "DELETE FROM {counted_payments_table} WHERE chain_id = $1 AND block_number > $2",
        counted_payments_table = counted_payments::NAME,
    ))
    .bind(chain_key)
    .bind(above)
    .execute(&mut *conn)
    .await
    .context("deleting counted payments above a reorg")?;
    stored_feeds::rewind(conn, chain_id, ancestor).await?;
    agents::refresh(conn, chain_id, touched).await?;
    reputation::settle(conn, chain_id, &chain.rules, ancestor).await?;
    sqlx::query(&format!(
        "DELETE FROM {block_window_table} WHERE chain_id = $1 AND number > $2",
        block_window_table = block_window::NAME,
    ))
    .bind(chain_key)
    .bind(above)
    .execute(&mut *conn)
    .await
    .context("trimming the reorg window")?;
    let hash: Option<String> = sqlx::query_scalar(&format!(
        "SELECT hash FROM {block_window_table} WHERE chain_id = $1 AND number = $2",
        block_window_table = block_window::NAME,
    ))
    .bind(chain_key)
    .bind(above)
    .fetch_optional(&mut *conn)
    .await
    .context("reading the ancestor's hash")?;
    // The rescoring above settled every agent, so reputation is settled wherever the cursor is.
    let back = Dialect::of(conn).least("indexed_block", "$1");
    sqlx::query(&format!(
        "UPDATE {chain_cursor_table} SET indexed_block = {back}, indexed_hash = $2, settled_block = {back}
         WHERE chain_id = $3",
        chain_cursor_table = chain_cursor::NAME,
    ))
    .bind(above)
    .bind(hash)
    .bind(chain_key)
    .execute(&mut *conn)
    .await
    .context("moving a chain cursor back")?;
    Ok(removed)
}
