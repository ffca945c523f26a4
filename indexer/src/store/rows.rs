//! Rows bound into multi-row INSERT statements as they are produced: one statement per few
//! thousand values instead of one per row. Binding needs no connection, so a batch's rows are
//! built by the follower that submits it, and the writer only executes the statements.

use super::{Dialect, QueryContext, StoreResult};
use sqlx::any::AnyArguments;
use sqlx::{AnyConnection, Arguments};
use std::collections::BTreeMap;

/// SQLite's limit on bound parameters per statement, with a margin.
const MAX_PARAMETERS: usize = 32_000;

/// One column value of a row.
#[derive(Debug, Clone)]
pub(super) enum Value {
    Int(Option<i64>),
    Text(Option<String>),
    Blob(Option<Vec<u8>>),
    Bool(Option<bool>),
}

macro_rules! value_from {
    ($($t:ty => |$v:ident| $e:expr),* $(,)?) => {
        $(impl From<$t> for Value {
            fn from($v: $t) -> Self {
                $e
            }
        })*
    };
}

value_from! {
    i64 => |v| Value::Int(Some(v)),
    Option<i64> => |v| Value::Int(v),
    bool => |v| Value::Bool(Some(v)),
    Option<bool> => |v| Value::Bool(v),
    String => |v| Value::Text(Some(v)),
    &String => |v| Value::Text(Some(v.clone())),
    &str => |v| Value::Text(Some(v.to_string())),
    Option<String> => |v| Value::Text(v),
    Option<&str> => |v| Value::Text(v.map(str::to_string)),
    &[u8] => |v| Value::Blob(Some(v.to_vec())),
    Vec<u8> => |v| Value::Blob(Some(v)),
    Option<Vec<u8>> => |v| Value::Blob(v),
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
    /// The statement's text: anonymous parameters for SQLite, numbered for PostgreSQL.
    fn sql(&self, dialect: Dialect) -> String {
        let mut sql = String::with_capacity(64 + self.rows * (self.width * 6 + 4));
        sql.push_str(&format!(
            "INSERT INTO {} ({}) VALUES ",
            self.table, self.columns
        ));
        let mut number = 0;
        for row in 0..self.rows {
            sql.push_str(if row > 0 { ", (" } else { "(" });
            for column in 0..self.width {
                if column > 0 {
                    sql.push_str(", ");
                }
                match dialect {
                    Dialect::Sqlite => sql.push('?'),
                    Dialect::Postgres => {
                        number += 1;
                        sql.push('$');
                        sql.push_str(&number.to_string());
                    }
                }
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
    /// Adds one row of `table`; `columns` lists them in the order of `values`.
    pub(super) fn push(&mut self, table: &'static str, columns: &'static str, values: Vec<Value>) {
        let open = self.open.entry(table).or_insert_with(|| Open {
            columns,
            width: values.len(),
            rows: 0,
            arguments: AnyArguments::default(),
        });
        debug_assert_eq!(open.width, values.len(), "row width of {table}");
        for value in values {
            let bound = match value {
                Value::Int(v) => open.arguments.add(v),
                Value::Text(v) => open.arguments.add(v),
                Value::Blob(v) => open.arguments.add(v),
                // Flags are integers (0 or 1) in both databases.
                Value::Bool(v) => open.arguments.add(v.map(i64::from)),
            };
            bound.expect("integers, text and blobs always bind");
        }
        open.rows += 1;
        *self.counts.entry(table).or_default() += 1;
        if (open.rows + 1) * open.width > MAX_PARAMETERS {
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
    // PostgreSQL connections plan every execution afresh (see `postgres`), which lookups need
    // and a full-size INSERT, run dozens of times a backfill, does not: it keeps its plan. SET
    // LOCAL ends with the transaction, whatever becomes of it.
    plan_cache(conn, dialect, "auto").await?;
    for insert in inserts {
        let sql = insert.sql(dialect);
        sqlx::query_with(&sql, insert.arguments)
            .execute(&mut *conn)
            .await
            .context("writing fact rows")?;
    }
    plan_cache(conn, dialect, "force_custom_plan").await
}

/// Sets PostgreSQL's plan cache mode for the rest of the transaction (or until set again).
async fn plan_cache(conn: &mut AnyConnection, dialect: Dialect, mode: &str) -> StoreResult<()> {
    if dialect == Dialect::Postgres {
        sqlx::query(&format!("SET LOCAL plan_cache_mode = {mode}"))
            .execute(&mut *conn)
            .await
            .context("setting the plan cache for fact rows")?;
    }
    Ok(())
}
