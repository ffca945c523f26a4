//! Masumi escrows as their actions leave them: the actions read in chain order and folded
//! (`crate::agents::masumi_payment`) into the `masumi_payments` rows.

use super::{cardano_facts_of, push_in};
use crate::agents::masumi_payment::{EscrowFact, EscrowState, fold_escrow};
use crate::schema::{masumi_escrow_actions, masumi_payments};
use crate::store::decode::int;
use crate::store::{Dialect, QueryContext, StoreResult};
use sqlx::{Any, AnyConnection, QueryBuilder};
use std::collections::BTreeMap;

/// One stored action, with its escrow.
#[derive(sqlx::FromRow)]
struct ActionRow {
    escrow_key: String,
    block_number: i64,
    block_timestamp: i64,
    tx_hash: Vec<u8>,
    contract_version: i64,
    agent_key: Option<String>,
    buyer: String,
    seller: String,
    unit: String,
    amount: String,
    event: String,
    state: Option<String>,
}

/// Recomputes the escrows `keys` of chain `chain_id`, removing those left without a lock.
pub(super) async fn refresh(
    conn: &mut AnyConnection,
    chain_id: u64,
    keys: &[String],
) -> StoreResult<()> {
    let rows: Vec<ActionRow> = cardano_facts_of(
        conn,
        masumi_escrow_actions::NAME,
        "escrow_key",
        "block_number, block_timestamp, tx_hash, contract_version, agent_key, buyer, seller, unit,
         amount, event, state",
        keys,
        "reading Masumi escrow actions",
    )
    .await?;
    let mut by_escrow: BTreeMap<String, Vec<EscrowFact>> = BTreeMap::new();
    for row in rows {
        by_escrow
            .entry(row.escrow_key)
            .or_default()
            .push(EscrowFact {
                block: row.block_number,
                timestamp: row.block_timestamp,
                tx_hash: alloy::hex::encode(&row.tx_hash),
                contract_version: row.contract_version,
                agent_key: row.agent_key,
                buyer: row.buyer,
                seller: row.seller,
                unit: row.unit,
                amount: row.amount,
                event: row.event,
                state: row.state,
            });
    }
    let computed: Vec<(&String, EscrowState)> = keys
        .iter()
        .filter_map(|key| Some((key, fold_escrow(by_escrow.get(key)?)?)))
        .collect();
    let mut delete = QueryBuilder::<Any>::new(format!(
        "DELETE FROM {} WHERE escrow_key",
        masumi_payments::NAME
    ));
    push_in(&mut delete, keys.iter().map(String::as_str));
    Dialect::of(conn)
        .portable(delete)
        .build()
        .execute(&mut *conn)
        .await
        .context("replacing Masumi escrows")?;
    if computed.is_empty() {
        return Ok(());
    }
    let chain = int("chain_id", chain_id)?;
    let columns = masumi_payments::TABLE.column_list();
    let mut insert = QueryBuilder::<Any>::new(format!(
        "INSERT INTO {} ({columns}) ",
        masumi_payments::NAME
    ));
    insert.push_values(&computed, |mut row, (key, e)| {
        row.push_bind(*key)
            .push_bind(chain)
            .push_bind(&e.agent_key)
            .push_bind(e.contract_version)
            .push_bind(&e.buyer)
            .push_bind(&e.seller)
            .push_bind(&e.unit)
            .push_bind(&e.amount)
            .push_bind(&e.state)
            .push_bind(&e.outcome)
            .push_bind(e.locked_block)
            .push_bind(e.locked_at)
            .push_bind(&e.lock_tx)
            .push_bind(e.settled_block)
            .push_bind(e.settled_at);
    });
    Dialect::of(conn)
        .portable(insert)
        .build()
        .execute(&mut *conn)
        .await
        .context("writing Masumi escrows")?;
    Ok(())
}
