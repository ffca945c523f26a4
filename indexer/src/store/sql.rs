//! Small SQL-building helpers the store's modules share.
//!
//! Looking facts up for a set of agents: such a query names the index it must use (SQLite's
//! `INDEXED BY`, written by [`Dialect::index_hint`]; nothing on PostgreSQL, whose planner keeps
//! statistics of its own) and leaves ordering to [`fetch_packed_in_chain_order`]. Left to itself
//! (no statistics, and an `ORDER BY block_number, log_index` that matches the primary key)
//! SQLite walks the whole table in key order instead of looking the agents up, so every batch
//! would cost as much as the table is long and a backfill would grow with the square of the
//! chain.
//!
//! Reading many rows: on SQLite sqlx hands each row from the connection's thread to the task on
//! its own, and a task that keeps up sleeps and is woken once per row; with a few hundred
//! thousand fact rows to rescore after a backfill, the wake-ups cost more than SQLite's reading.
//! There such queries pack their rows into one JSON array instead ([`packed_rows`],
//! [`fetch_packed`]): one value crosses, and serde decodes it straight into the rows' structs
//! (declared with [`packed_row!`](super::packed_row::packed_row), the select list beside each
//! field). PostgreSQL's driver reads rows off the socket in the task itself, with no wake-up per
//! row, while building the JSON would cost its server more than finding the rows (about 2 µs a
//! row, on the single core a connection has): there the same queries return plain rows, which
//! serde decodes into the same structs ([`super::row_values`]).

use super::in_list::push_in;
use super::packed_row::PackedRow;
use super::row_values::{Shape, from_row};
use super::{Dialect, QueryContext, StoreError, StoreResult};
use futures::TryStreamExt;
use serde::de::DeserializeOwned;
use sqlx::{Any, AnyConnection, QueryBuilder};

/// Runs a multi-row write of `rows` rows (built with `push_values`), at most `per_statement` to
/// a statement, and returns the rows it changed. A full statement stays compiled on the
/// connection, its text repeating from batch to batch; a shorter one, whose text is its own
/// count's, is compiled for its one use: kept, every count met would be one more compiled
/// program held until the connection closes (as [`super::rows`] does for facts, and
/// [`super::in_list`] for lists).
pub(super) async fn write_rows(
    conn: &mut AnyConnection,
    write: QueryBuilder<'_, Any>,
    rows: usize,
    per_statement: usize,
    context: &'static str,
) -> StoreResult<u64> {
    let written = Dialect::of(conn)
        .portable(write)
        .build()
        .persistent(rows == per_statement)
        .execute(&mut *conn)
        .await
        .context(context)?;
    Ok(written.rows_affected())
}

/// Deletes the rows of `table` whose `agent_key` is one of `keys` (none: nothing is run);
/// `context` names the deletion in errors.
pub(super) async fn delete_agent_rows<T: AsRef<str>>(
    conn: &mut AnyConnection,
    table: &str,
    keys: &[T],
    context: &'static str,
) -> StoreResult<()> {
    if keys.is_empty() {
        return Ok(());
    }
    let mut delete = QueryBuilder::<Any>::new(format!("DELETE FROM {table} WHERE agent_key"));
    push_in(&mut delete, keys.iter().map(AsRef::as_ref));
    Dialect::of(conn)
        .portable(delete)
        .build()
        .execute(&mut *conn)
        .await
        .context(context)?;
    Ok(())
}

/// The select list of a read of `T`s, for [`fetch_packed`]: on SQLite one JSON array of rows,
/// each the array of `T`'s fields, on PostgreSQL the fields themselves. The fields are plain
/// values (text, integers, NULL); SQLite refuses to put a BLOB in JSON.
pub(super) fn packed<T: PackedRow>(dialect: Dialect) -> String {
    match dialect {
        Dialect::Sqlite => dialect.json_aggregate(&dialect.json_array(&T::select_list(dialect))),
        Dialect::Postgres => T::select_list(dialect),
    }
}

/// [`packed`] for rows with a place on the chain: each `[block_number, log_index, [fields…]]`
/// (on PostgreSQL `block_number, log_index, fields…`), for [`fetch_packed_in_chain_order`].
pub(super) fn packed_rows<T: PackedRow>(dialect: Dialect) -> String {
    match dialect {
        Dialect::Sqlite => dialect.json_aggregate(&dialect.json_array(&format!(
            "block_number, log_index, {}",
            dialect.json_array(&T::select_list(dialect))
        ))),
        Dialect::Postgres => format!("block_number, log_index, {}", T::select_list(dialect)),
    }
}

/// Runs `query`, which selects [`packed`] `T`s, and returns its rows. `context` names the query
/// in errors.
pub(super) async fn fetch_packed<T: PackedRow>(
    conn: &mut AnyConnection,
    query: QueryBuilder<'_, Any>,
    context: &'static str,
) -> StoreResult<Vec<T>> {
    fetch_rows(conn, query, Shape::Flat, context).await
}

/// Runs `query`, which selects [`packed_rows`] of `T`, and returns its rows in chain order: each
/// its block, log index and `T`.
pub(super) async fn fetch_packed_in_chain_order<T: PackedRow>(
    conn: &mut AnyConnection,
    query: QueryBuilder<'_, Any>,
    context: &'static str,
) -> StoreResult<Vec<(i64, i64, T)>> {
    let mut rows: Vec<(i64, i64, T)> = fetch_rows(conn, query, Shape::Leading(2), context).await?;
    sort_in_chain_order(&mut rows);
    Ok(rows)
}

/// Runs `query`, whose result [`packed`] or [`packed_rows`] selected, and decodes its rows as
/// `T`, each row's values grouped by `shape`: from the one JSON array on SQLite, row by row on
/// PostgreSQL.
async fn fetch_rows<T: DeserializeOwned>(
    conn: &mut AnyConnection,
    query: QueryBuilder<'_, Any>,
    shape: Shape,
    context: &'static str,
) -> StoreResult<Vec<T>> {
    let corrupt = |reason: String| StoreError::Corrupt {
        what: context.to_string(),
        reason,
    };
    let dialect = Dialect::of(conn);
    let mut query = dialect.portable(query);
    match dialect {
        Dialect::Sqlite => {
            let packed: String = query
                .build_query_scalar()
                .fetch_one(conn)
                .await
                .context(context)?;
            serde_json::from_str(&packed).map_err(|error| corrupt(error.to_string()))
        }
        Dialect::Postgres => {
            // Each row decoded as it comes: the driver's rows are larger than the structs.
            let mut rows = query.build().fetch(conn);
            let mut decoded = Vec::new();
            while let Some(row) = rows.try_next().await.context(context)? {
                decoded.push(from_row(row, shape).map_err(|error| corrupt(error.to_string()))?);
            }
            Ok(decoded)
        }
    }
}

/// Sorts rows read with [`packed_rows`] by their position on the chain.
pub(super) fn sort_in_chain_order<T>(rows: &mut [(i64, i64, T)]) {
    rows.sort_by_key(|(block, log, _)| (*block, *log));
}

/// ` ON CONFLICT (key) DO UPDATE SET` each of `columns` not in `key` to the inserted row's
/// value: SQLite's `INSERT OR REPLACE`, in the SQL both databases accept.
pub(super) fn or_replace(key: &str, columns: &str) -> String {
    let keys: Vec<&str> = key.split(',').map(str::trim).collect();
    let set: Vec<String> = columns
        .split(',')
        .map(str::trim)
        .filter(|column| !column.is_empty() && !keys.contains(column))
        .map(|column| format!("{column} = excluded.{column}"))
        .collect();
    format!(" ON CONFLICT ({key}) DO UPDATE SET {}", set.join(", "))
}

/// The SQL expression that builds an ERC-8004 agent's key from its columns, exactly as
/// [`AgentKey`](crate::primitives::AgentKey) prints it (`chain:registry:token`). For statements
/// that stay inside the database (marking thousands of agents in one `INSERT … SELECT`); the test
/// below holds the two forms together.
pub(super) fn erc8004_key_sql(chain: &str, registry: &str, token: &str) -> String {
    format!("{chain} || ':' || {registry} || ':' || {token}")
}

/// [`erc8004_key_sql`] for an agent contract (`chain:contract`).
pub(super) fn contract_key_sql(chain: &str, contract: &str) -> String {
    format!("{chain} || ':' || {contract}")
}

/// A connection's count of compiled statements kept, read after a statement that keeps none
/// (SQLite's worker updates the count after it has answered each statement, so only the
/// statements before the last one are surely counted).
#[cfg(test)]
pub(super) async fn compiled_statements_kept(conn: &mut AnyConnection) -> usize {
    sqlx::query("SELECT 1")
        .persistent(false)
        .execute(&mut *conn)
        .await
        .expect("a query that keeps nothing");
    sqlx::Connection::cached_statements_size(conn)
}

/// A read transaction on `pool` whose every query sees one snapshot
/// ([`Dialect::begin_snapshot`]).
pub(crate) async fn snapshot_of(
    pool: &sqlx::AnyPool,
) -> StoreResult<sqlx::Transaction<'static, sqlx::Any>> {
    let begin = Dialect::of_pool(pool).begin_snapshot();
    pool.begin_with(begin)
        .await
        .context("starting a read snapshot")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primitives::AgentKey;
    use crate::sources::hex_address;
    use alloy::primitives::{U256, address};
    use sqlx::Connection;

    #[tokio::test]
    async fn keys_built_in_sql_are_the_keys_rust_prints() {
        let mut conn = AnyConnection::connect("sqlite::memory:")
            .await
            .expect("sqlite");
        let registry = address!("8004A169FB4a3325136EB29fA0ceB6D2e539a432");
        let token = U256::from(123_456_789_u64);
        let erc8004: String =
            sqlx::query_scalar(&format!("SELECT {}", erc8004_key_sql("?1", "?2", "?3")))
                .bind(8453_i64)
                .bind(hex_address(&registry))
                .bind(token.to_string())
                .fetch_one(&mut conn)
                .await
                .expect("a key");
        assert_eq!(
            erc8004,
            AgentKey::erc8004(8453, registry, token).to_string()
        );
        let contract: String =
            sqlx::query_scalar(&format!("SELECT {}", contract_key_sql("?1", "?2")))
                .bind(31337_i64)
                .bind(hex_address(&registry))
                .fetch_one(&mut conn)
                .await
                .expect("a key");
        assert_eq!(contract, AgentKey::contract(31337, registry).to_string());
    }

    /// A full multi-row write stays compiled on the connection; a short one (its own count's
    /// text) does not.
    #[tokio::test]
    async fn only_full_multi_row_writes_stay_compiled() {
        crate::store::install_drivers();
        let mut conn = AnyConnection::connect("sqlite::memory:")
            .await
            .expect("sqlite");
        sqlx::query("CREATE TABLE t (k INTEGER PRIMARY KEY)")
            .persistent(false)
            .execute(&mut conn)
            .await
            .expect("the table");
        let mut next = 0_i64;
        let mut write_of = |rows: usize| {
            let keys: Vec<i64> = (next..next + rows as i64).collect();
            next += rows as i64;
            let mut write = QueryBuilder::<Any>::new("INSERT INTO t (k) ");
            write.push_values(keys, |mut row, key| {
                row.push_bind(key);
            });
            write
        };
        let before = compiled_statements_kept(&mut conn).await;
        let short = write_of(3);
        write_rows(&mut conn, short, 3, 4, "a short write")
            .await
            .unwrap();
        assert_eq!(compiled_statements_kept(&mut conn).await, before);
        for _ in 0..2 {
            let full = write_of(4);
            write_rows(&mut conn, full, 4, 4, "a full write")
                .await
                .unwrap();
        }
        assert_eq!(compiled_statements_kept(&mut conn).await, before + 1);
        let count: i64 = sqlx::query_scalar("SELECT count(*) FROM t")
            .fetch_one(&mut conn)
            .await
            .unwrap();
        assert_eq!(count, 11);
    }
}
