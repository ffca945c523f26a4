//! Funding facts: of the inflows the follower brought with a batch, the ones the trail of a
//! payment the batch credited reaches (`reputation::funding_trail`), each with the block of the
//! first such payment. A transfer already kept by an earlier batch keeps its earlier payment.

use crate::reputation::funding_trail::{Inflow, Move, trail};
use crate::schema::funding_edges;
use crate::sources::hex_address;
use crate::store::StoreResult;
use crate::store::decode::int;
use crate::store::sql::write_rows;
use sqlx::{Any, AnyConnection, QueryBuilder};

/// Rows per INSERT statement.
const ROWS_PER_INSERT: usize = 2_000;

/// Writes the inflows the trails of `payments` reach, `lookback` blocks before each move;
/// returns how many were new.
pub(super) async fn write_trail(
    conn: &mut AnyConnection,
    chain_id: u64,
    payments: &[Move],
    inflows: &[Inflow],
    lookback: u64,
) -> StoreResult<u64> {
    if payments.is_empty() || inflows.is_empty() || lookback == 0 {
        return Ok(0);
    }
    let kept: Vec<(&Inflow, u64)> = trail(payments, inflows, lookback)
        .into_values()
        .map(|(i, paid_block)| (&inflows[i], paid_block))
        .collect();
    let chain = int("chain_id", chain_id)?;
    let columns = funding_edges::TABLE.column_list();
    let mut written = 0;
    for chunk in kept.chunks(ROWS_PER_INSERT) {
        let numbers = chunk
            .iter()
            .map(|(inflow, paid_block)| {
                Ok([
                    int("block_number", inflow.block)?,
                    int("log_index", inflow.log_index)?,
                    int("paid_block", *paid_block)?,
                ])
            })
            .collect::<StoreResult<Vec<_>>>()?;
        let mut insert =
            QueryBuilder::<Any>::new(format!("INSERT INTO {} ({columns}) ", funding_edges::NAME));
        insert.push_values(chunk.iter().zip(numbers), |mut row, ((inflow, _), n)| {
            row.push_bind(chain)
                .push_bind(n[0])
                .push_bind(n[1])
                .push_bind(hex_address(&inflow.token))
                .push_bind(hex_address(&inflow.funder))
                .push_bind(hex_address(&inflow.funded))
                .push_bind(inflow.amount.to_string())
                .push_bind(n[2]);
        });
        insert.push(" ON CONFLICT (chain_id, block_number, log_index) DO NOTHING");
        written += write_rows(
            conn,
            insert,
            chunk.len(),
            ROWS_PER_INSERT,
            "writing funding transfers",
        )
        .await?;
    }
    Ok(written)
}
