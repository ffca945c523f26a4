//! A Masumi agent's payments for its reputation: the escrows of Masumi's payment contract
//! released to its seller (refunds and disputes are not demand), each a `Payment` of the buyer
//! to the seller in ada or the stablecoin paid, the parties and the token as the 20-byte
//! identities the method counts (`primitives::cardano_party`, `cardano_token`). A payment's
//! place is its payout's block; its index in the block the transaction's index and the
//! action's place in it.

use super::{Loaded, Subject, seen};
use crate::primitives::{cardano_party, cardano_token, sql_bound};
use crate::reputation::Payment;
use crate::schema::masumi_escrow_actions;
use crate::store::decode;
use crate::store::sql::push_in;
use crate::store::{Dialect, QueryContext, StoreResult};
use alloy::primitives::{B256, U256};
use sqlx::{Any, AnyConnection, QueryBuilder};
use std::collections::BTreeMap;

/// Places an action within its block: transactions are far fewer than this per block, and a
/// transaction's escrow actions too.
const ACTIONS_PER_TX: i64 = 1 << 16;

#[derive(sqlx::FromRow)]
struct Released {
    agent_key: String,
    block_number: i64,
    tx_index: i64,
    position: i64,
    block_timestamp: i64,
    tx_hash: Vec<u8>,
    buyer: String,
    seller: String,
    unit: String,
    amount: String,
}

/// Adds the released escrows of the Masumi agents among `subjects` up to block `up_to`.
pub(super) async fn released_escrows(
    conn: &mut AnyConnection,
    subjects: &[Subject],
    up_to: u64,
    loaded: &mut BTreeMap<String, Loaded>,
) -> StoreResult<()> {
    let keys: Vec<&str> = subjects
        .iter()
        .filter(|s| s.masumi)
        .map(|s| s.key.as_str())
        .collect();
    if keys.is_empty() {
        return Ok(());
    }
    let mut query = QueryBuilder::<Any>::new(format!(
        "SELECT agent_key, block_number, tx_index, position, block_timestamp, tx_hash, buyer,
                seller, unit, amount
         FROM {table} WHERE event = 'released' AND block_number <= ",
        table = masumi_escrow_actions::NAME
    ));
    query.push_bind(sql_bound(up_to));
    query.push(" AND agent_key");
    push_in(&mut query, keys);
    query.push(" ORDER BY block_number, tx_index, position");
    let rows: Vec<Released> = Dialect::of(conn)
        .portable(query)
        .build_query_as()
        .fetch_all(&mut *conn)
        .await
        .context("reading Masumi agents' released escrows")?;
    let table = masumi_escrow_actions::NAME;
    for row in rows {
        let credential = |column: &str, hex: &str| {
            alloy::hex::decode(hex).map_err(|e| decode::corrupt(table, column, hex, e))
        };
        let payment = Payment {
            payer: cardano_party(&credential("buyer", &row.buyer)?),
            payee: cardano_party(&credential("seller", &row.seller)?),
            token: cardano_token(&row.unit),
            amount: decode::parse::<U256>(table, "amount", &row.amount)?,
            block: decode::uint(table, "block_number", row.block_number)?,
            log_index: decode::uint(
                table,
                "tx_index",
                row.tx_index * ACTIONS_PER_TX + row.position,
            )?,
            tx_hash: B256::try_from(row.tx_hash.as_slice()).map_err(|e| {
                decode::corrupt(table, "tx_hash", &alloy::hex::encode(&row.tx_hash), e)
            })?,
            timestamp: decode::uint(table, "block_timestamp", row.block_timestamp)?,
            x402: false,
        };
        seen(loaded, &row.agent_key, row.block_number)?
            .facts
            .payments
            .push(payment);
    }
    Ok(())
}
