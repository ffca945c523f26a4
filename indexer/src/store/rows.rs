//! Rows of declared tables (each a [`TableRow`]: every column named and typed as declared)
//! bound as they are produced, a few thousand values to a statement instead of a statement a
//! row: on SQLite a multi-row INSERT, on PostgreSQL a bulk load (`COPY`, see
//! `postgres_copy`) with the same bound values. Binding needs no connection, so a batch's rows
//! are built by the follower that submits it, and the writer only executes the statements.

use super::{Dialect, QueryContext, StoreResult};
use crate::schema::{Cell, TableRow};
use sqlx::any::AnyArguments;
use sqlx::{AnyConnection, Arguments};
use std::collections::BTreeMap;

/// Bound values per SQLite statement (its own limit is 32,766). The writer keeps each table's
/// full statement compiled, and a compiled multi-row INSERT grows with its values: at 32,000 a
/// statement the M backfill's compiled statements held about 20 MiB of its peak heap. At 4,000
/// a batch runs eight times as many statements, in the same time.
const MAX_PARAMETERS: usize = 4_000;

/// Whether `rows` rows of `width` values are as many as one statement may hold.
fn no_room_after(rows: usize, width: usize) -> bool {
    (rows + 1) * width > MAX_PARAMETERS
}

/// One ready INSERT with its values bound; its text is written for the connection it runs on.
struct Insert {
    table: &'static str,
    columns: &'static str,
    width: usize,
    rows: usize,
    arguments: AnyArguments<'static>,
}

impl Insert {
    /// Whether the statement holds as many rows as one may: its text repeats from batch to
    /// batch, so SQLite's compiled form is worth keeping. A batch's last rows of a table come in
    /// a count of their own each time, and a compiled statement of thousands of values kept for
    /// each of those held about 19 MB of a backfill's heap.
    fn is_full(&self) -> bool {
        no_room_after(self.rows, self.width)
    }

    /// The statement's text: a multi-row INSERT with anonymous parameters for SQLite, a bulk
    /// load for PostgreSQL.
    fn sql(&self, dialect: Dialect) -> String {
        if dialect == Dialect::Postgres {
            return super::postgres_copy::copy_in(self.table, self.columns);
        }
        let mut sql = String::with_capacity(64 + self.rows * (self.width * 3 + 4));
        sql.push_str(&format!(
            "INSERT INTO {} ({}) VALUES ",
            self.table, self.columns
        ));
        for row in 0..self.rows {
            sql.push_str(if row > 0 { ", (" } else { "(" });
            for column in 0..self.width {
                if column > 0 {
                    sql.push_str(", ");
                }
                sql.push('?');
            }
            sql.push(')');
        }
        sql
    }
}

/// The rows of one table not yet closed into a statement.
struct Open {
    columns: &'static str,
    width: usize,
    rows: usize,
    arguments: AnyArguments<'static>,
}

/// Rows waiting to be inserted, by table, already bound.
#[derive(Default)]
pub(super) struct Rows {
    open: BTreeMap<&'static str, Open>,
    ready: Vec<Insert>,
    /// Rows pushed so far, by table.
    counts: BTreeMap<&'static str, u64>,
}

impl Rows {
    /// Adds one row of its table, every column, typed as the table declares them.
    pub(super) fn insert<R: TableRow>(&mut self, row: R) {
        let table = R::TABLE.name;
        let cells = row.cells();
        let open = self.open.entry(table).or_insert_with(|| Open {
            columns: R::COLUMNS,
            width: cells.len(),
            rows: 0,
            arguments: AnyArguments::default(),
        });
        for cell in cells {
            let bound = match cell {
                Cell::Integer(v) => open.arguments.add(v),
                Cell::Real(v) => open.arguments.add(v),
                Cell::Text(v) => open.arguments.add(v),
                Cell::Blob(v) => open.arguments.add(v),
            };
            bound.expect("integers, reals, text and blobs always bind");
        }
        open.rows += 1;
        *self.counts.entry(table).or_default() += 1;
        if no_room_after(open.rows, open.width) {
            self.close(table);
        }
    }

    /// Rows pushed so far, by table.
    pub(super) fn counts(&self) -> &BTreeMap<&'static str, u64> {
        &self.counts
    }

    /// Turns the open rows of `table` into a statement.
    fn close(&mut self, table: &'static str) {
        let Some(open) = self.open.remove(table) else {
            return;
        };
        if open.rows == 0 {
            return;
        }
        self.ready.push(Insert {
            table,
            columns: open.columns,
            width: open.width,
            rows: open.rows,
            arguments: open.arguments,
        });
    }

    /// Writes the rows of `table` so far.
    pub(super) async fn flush_table(
        &mut self,
        conn: &mut AnyConnection,
        table: &'static str,
    ) -> StoreResult<()> {
        self.close(table);
        let (now, later) = std::mem::take(&mut self.ready)
            .into_iter()
            .partition(|insert| insert.table == table);
        self.ready = later;
        execute(conn, now).await
    }

    /// Writes every row so far.
    pub(super) async fn flush(&mut self, conn: &mut AnyConnection) -> StoreResult<()> {
        let tables: Vec<&'static str> = self.open.keys().copied().collect();
        for table in tables {
            self.close(table);
        }
        execute(conn, std::mem::take(&mut self.ready)).await
    }
}

impl std::fmt::Debug for Rows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let waiting: BTreeMap<&str, usize> = self
            .open
            .iter()
            .map(|(table, open)| (*table, open.rows))
            .chain(self.ready.iter().map(|insert| (insert.table, insert.rows)))
            .collect();
        f.debug_struct("Rows").field("waiting", &waiting).finish()
    }
}

async fn execute(conn: &mut AnyConnection, inserts: Vec<Insert>) -> StoreResult<()> {
    if inserts.is_empty() {
        return Ok(());
    }
    let dialect = Dialect::of(conn);
    let inserts = match dialect {
        Dialect::Sqlite => inserts,
        Dialect::Postgres => one_per_table(inserts),
    };
    for insert in inserts {
        let sql = insert.sql(dialect);
        let keep = insert.is_full();
        sqlx::query_with(&sql, insert.arguments)
            .persistent(keep)
            .execute(&mut *conn)
            .await
            .context("writing fact rows")?;
    }
    Ok(())
}

/// `inserts` with each table's rows in one statement, in the order of its first: a bulk load
/// takes any number of values, where SQLite's statements each take at most
/// [`MAX_PARAMETERS`].
fn one_per_table(inserts: Vec<Insert>) -> Vec<Insert> {
    let mut merged: Vec<Insert> = Vec::new();
    for insert in inserts {
        match merged.iter_mut().find(|m| m.table == insert.table) {
            Some(into) => {
                into.rows += insert.rows;
                into.arguments.values.0.extend(insert.arguments.values.0);
            }
            None => merged.push(insert),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::{MAX_PARAMETERS, Rows};
    use crate::schema::payment_bindings;

    fn binding(n: i64) -> payment_bindings::Row {
        payment_bindings::Row {
            chain_id: 1,
            agent_key: format!("1:{n}"),
            address: format!("0x{n:040x}"),
            block_number: n,
            log_index: 0,
        }
    }

    /// A table's rows fill whole statements, which are kept compiled (their text repeats from
    /// batch to batch); the rest go in one last statement, compiled for its one use and not kept.
    #[tokio::test]
    async fn only_whole_statements_stay_compiled() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = crate::store::Store::open(&format!(
            "sqlite://{}",
            dir.path().join("rows.db").display()
        ))
        .await
        .expect("the store opens");
        let mut conn = store.write.acquire().await.expect("the write connection");
        let per_statement = MAX_PARAMETERS / 5;
        let total = 2 * per_statement + 7;
        let mut rows = Rows::default();
        for n in 0..total {
            rows.insert(binding(n as i64));
        }
        let before = crate::store::sql::compiled_statements_kept(&mut conn).await;
        rows.flush(&mut conn).await.expect("the rows are written");
        let (after, written) = (
            crate::store::sql::compiled_statements_kept(&mut conn).await,
            count(&mut conn).await,
        );
        assert_eq!(written, total as i64);
        assert_eq!(
            after,
            before + 1,
            "the two whole statements share one compiled form, the last one is not kept"
        );
    }

    async fn count(conn: &mut sqlx::AnyConnection) -> i64 {
        sqlx::query_scalar(&format!("SELECT count(*) FROM {}", payment_bindings::NAME))
            .persistent(false)
            .fetch_one(&mut *conn)
            .await
            .expect("the rows are counted")
    }
}
