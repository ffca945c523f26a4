//! A Masumi agent's payments for its reputation: the escrows of Masumi's payment contract
//! released to its seller (refunds and disputes are not demand), each a `Payment` of the buyer
//! to the seller in ada or the stablecoin paid, the parties and the token as the 20-byte
//! identities the method counts (`primitives::cardano_party`, `cardano_token`). A payment's
//! place is its payout's block; its index in the block the transaction's index and the
//! action's place in it.
//!
//! Its side is the holder of its registry NFT: each mint (the first, and each V2 update) puts
//! the payment credential of the address it was minted to on the agent's side from that
//! transaction on, as an ERC-8004 transfer does its new owner. An escrow its holder pays is the
//! agent paying itself. NFT transfers after a mint are not followed.

use super::{Loaded, Subject, at, seen};
use crate::primitives::{cardano_party, cardano_payment_credential, cardano_token, sql_bound};
use crate::reputation::{Payment, SideChange};
use crate::schema::{masumi_escrow_actions, masumi_registry_actions};
use crate::store::decode;
use crate::store::in_list::push_in;
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

/// `select` (ending `… block_number <= `) up to block `up_to`, for the Masumi agents among
/// `subjects`; none when there are none.
fn of_masumi_agents<'a>(
    select: String,
    subjects: &'a [Subject],
    up_to: u64,
) -> Option<QueryBuilder<'a, Any>> {
    let keys: Vec<&str> = subjects
        .iter()
        .filter(|s| s.masumi)
        .map(|s| s.key.as_str())
        .collect();
    if keys.is_empty() {
        return None;
    }
    let mut query = QueryBuilder::<Any>::new(select);
    query.push_bind(sql_bound(up_to));
    query.push(" AND agent_key");
    push_in(&mut query, keys);
    Some(query)
}

/// Adds the released escrows of the Masumi agents among `subjects` up to block `up_to`.
pub(super) async fn released_escrows(
    conn: &mut AnyConnection,
    subjects: &[Subject],
    up_to: u64,
    loaded: &mut BTreeMap<String, Loaded>,
) -> StoreResult<()> {
    let select = format!(
        "SELECT agent_key, block_number, tx_index, position, block_timestamp, tx_hash, buyer,
                seller, unit, amount
         FROM {table} WHERE event = 'released' AND block_number <= ",
        table = masumi_escrow_actions::NAME
    );
    let Some(mut query) = of_masumi_agents(select, subjects, up_to) else {
        return Ok(());
    };
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
            log_index: decode::uint(table, "tx_index", place(row.tx_index, row.position))?,
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

/// An action's place within its block, as a log index.
fn place(tx_index: i64, position: i64) -> i64 {
    tx_index * ACTIONS_PER_TX + position
}

/// Adds, for the Masumi agents among `subjects`, the holder of each NFT minted for them up to
/// block `up_to` as their owner from that mint on (see the module's header). A holder that is
/// not a Shelley address with a payment part puts nobody on the side.
pub(super) async fn holders(
    conn: &mut AnyConnection,
    subjects: &[Subject],
    up_to: u64,
    loaded: &mut BTreeMap<String, Loaded>,
) -> StoreResult<()> {
    let select = format!(
        "SELECT agent_key, block_number, tx_index, position, holder FROM {table}
         WHERE action = 'mint' AND holder IS NOT NULL AND block_number <= ",
        table = masumi_registry_actions::NAME
    );
    let Some(query) = of_masumi_agents(select, subjects, up_to) else {
        return Ok(());
    };
    let rows: Vec<(String, i64, i64, i64, String)> = Dialect::of(conn)
        .portable(query)
        .build_query_as()
        .fetch_all(&mut *conn)
        .await
        .context("reading the holders of Masumi agents' NFTs")?;
    for (key, block, tx_index, position, holder) in rows {
        let Some(credential) = cardano_payment_credential(&holder) else {
            continue;
        };
        seen(loaded, &key, block)?.facts.side.push(
            at(block, place(tx_index, position))?,
            SideChange::Owner(cardano_party(&credential)),
        );
    }
    Ok(())
}
