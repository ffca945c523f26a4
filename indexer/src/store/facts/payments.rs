//! Payment facts: which addresses are bound to which agent from when, and the payments credited
//! through those bindings.

use super::i;
use crate::sources::{Decoded, hex_address, hex_b256};
use crate::store::batch::{ChainContext, EventRecord};
use crate::store::rows::Rows;
use crate::store::{QueryContext, StoreResult};
use alloy::primitives::{Address, U256};
use sqlx::SqliteConnection;

/// A token Transfer counts when its recipient is bound to an agent at that point of the chain;
/// only then is it stored (so what is stored never depends on how ranges were cut).
pub(super) async fn apply_token(
    conn: &mut SqliteConnection,
    rows: &mut Rows,
    chain: &ChainContext,
    ev: &EventRecord,
) -> StoreResult<bool> {
    let Ok(Decoded::TokenTransfer { from, to, value }) = &ev.decoded else {
        return Ok(false);
    };
    // Bindings made earlier in this batch must be visible to the lookup.
    rows.flush_table(conn, "payment_bindings").await?;
    let agents: Vec<String> = sqlx::query_scalar(
        "SELECT DISTINCT b.agent_key FROM payment_bindings b
         WHERE b.chain_id = ?1 AND b.address = ?2 AND (b.block_number, b.log_index) <= (?3, ?4)
           AND NOT EXISTS (
             SELECT 1 FROM payment_bindings n
             WHERE n.agent_key = b.agent_key
               AND (n.block_number, n.log_index) > (b.block_number, b.log_index)
               AND (n.block_number, n.log_index) <= (?3, ?4))",
    )
    .bind(i(chain.chain_id))
    .bind(hex_address(to))
    .bind(i(ev.block_number))
    .bind(i(ev.log_index))
    .fetch_all(&mut *conn)
    .await
    .context("finding the agents a payment address is bound to")?;
    if agents.is_empty() {
        return Ok(false);
    }
    for agent_key in &agents {
        insert_payment(
            rows,
            chain.chain_id,
            ev,
            agent_key,
            &ev.address,
            from,
            to,
            value,
            ev.settlement_nonce.as_ref(),
        )
        .await?;
    }
    Ok(true)
}

pub(super) async fn bind_payments(
    rows: &mut Rows,
    chain_id: u64,
    agent_key: &str,
    address: &str,
    ev: &EventRecord,
) -> StoreResult<()> {
    rows.push(
        "payment_bindings",
        "chain_id, agent_key, address, block_number, log_index",
        vec![
            i(chain_id).into(),
            agent_key.into(),
            address.into(),
            i(ev.block_number).into(),
            i(ev.log_index).into(),
        ],
    );
    Ok(())
}

#[allow(clippy::too_many_arguments)]
pub(super) async fn insert_payment(
    rows: &mut Rows,
    chain_id: u64,
    ev: &EventRecord,
    agent_key: &str,
    token: &Address,
    payer: &Address,
    payee: &Address,
    amount: &U256,
    nonce: Option<&alloy::primitives::B256>,
) -> StoreResult<()> {
    rows.push(
"payments",
"chain_id, block_number, log_index, agent_key, tx_hash, token, payer, payee, amount, eip3009, nonce, timestamp",
vec![i(chain_id).into(), i(ev.block_number).into(), i(ev.log_index).into(), agent_key.into(), hex_b256(&ev.tx_hash).into(), hex_address(token).into(), hex_address(payer).into(), hex_address(payee).into(), amount.to_string().into(), nonce.is_some().into(), nonce.map(hex_b256).into(), i(ev.block_timestamp).into()],
);
    Ok(())
}
