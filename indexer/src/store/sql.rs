//! Small SQL-building helpers the store's modules share.
//!
//! Looking facts up for a set of agents: such a query names the index it must use (`INDEXED BY`)
//! and leaves ordering to [`in_chain_order`]. Left to itself (no statistics, and an
//! `ORDER BY block_number, log_index` that matches the primary key) SQLite walks the whole table
//! in key order instead of looking the agents up, so every batch would cost as much as the table
//! is long and a backfill would grow with the square of the chain.

use super::{QueryContext, StoreResult};
use sqlx::sqlite::SqliteRow;
use sqlx::{QueryBuilder, Row, Sqlite, SqliteConnection};

/// Appends ` IN (?, ?, …)` with one bound parameter per item.
pub(super) fn push_in<'a, T>(
    query: &mut QueryBuilder<'a, Sqlite>,
    items: impl IntoIterator<Item = T>,
) where
    T: 'a + sqlx::Encode<'a, Sqlite> + sqlx::Type<Sqlite>,
{
    query.push(" IN (");
    let mut list = query.separated(", ");
    for item in items {
        list.push_bind(item);
    }
    query.push(") ");
}

/// `rows` (each with `block_number` and `log_index`) sorted by their position on the chain.
pub(super) fn in_chain_order(mut rows: Vec<SqliteRow>) -> Vec<SqliteRow> {
    rows.sort_by_cached_key(|row| {
        (
            row.get::<i64, _>("block_number"),
            row.get::<i64, _>("log_index"),
        )
    });
    rows
}

/// Runs `query` and returns its rows [`in_chain_order`]; `context` names it in errors.
pub(super) async fn fetch_in_chain_order(
    conn: &mut SqliteConnection,
    mut query: QueryBuilder<'_, Sqlite>,
    context: &'static str,
) -> StoreResult<Vec<SqliteRow>> {
    let rows = query.build().fetch_all(conn).await.context(context)?;
    Ok(in_chain_order(rows))
}
