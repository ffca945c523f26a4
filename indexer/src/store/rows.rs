//! Fact rows buffered per table and written with multi-row INSERTs: one statement per few
//! hundred rows instead of one per event, which is most of the writer's cost otherwise.

use super::{QueryContext, StoreResult};
use sqlx::{QueryBuilder, Sqlite, SqliteConnection};
use std::collections::BTreeMap;

/// SQLite's limit on bound parameters per statement, with a margin.
const MAX_PARAMETERS: usize = 32_000;

/// One column value of a buffered row.
#[derive(Debug, Clone)]
pub(super) enum Value {
    Int(Option<i64>),
    Text(Option<String>),
    Blob(Vec<u8>),
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
    &[u8] => |v| Value::Blob(v.to_vec()),
}

#[derive(Debug, Default)]
struct Table {
    columns: &'static str,
    width: usize,
    rows: Vec<Vec<Value>>,
}

/// Rows waiting to be inserted, by table.
#[derive(Debug, Default)]
pub(super) struct Rows {
    tables: BTreeMap<&'static str, Table>,
}

impl Rows {
    /// Buffers one row of `table`; `columns` lists them in the order of `values`.
    pub(super) fn push(&mut self, table: &'static str, columns: &'static str, values: Vec<Value>) {
        let entry = self.tables.entry(table).or_insert_with(|| Table {
            columns,
            width: values.len(),
            rows: Vec::new(),
        });
        debug_assert_eq!(entry.width, values.len(), "row width of {table}");
        entry.rows.push(values);
    }

    /// Writes the buffered rows of `table`.
    pub(super) async fn flush_table(
        &mut self,
        conn: &mut SqliteConnection,
        table: &'static str,
    ) -> StoreResult<()> {
        let Some(buffered) = self.tables.get_mut(table) else {
            return Ok(());
        };
        let rows = std::mem::take(&mut buffered.rows);
        let per_statement = (MAX_PARAMETERS / buffered.width.max(1)).max(1);
        for chunk in rows.chunks(per_statement) {
            let mut insert =
                QueryBuilder::<Sqlite>::new(format!("INSERT INTO {table} ({}) ", buffered.columns));
            insert.push_values(chunk, |mut row, values| {
                for value in values {
                    match value.clone() {
                        Value::Int(v) => row.push_bind(v),
                        Value::Text(v) => row.push_bind(v),
                        Value::Blob(v) => row.push_bind(v),
                        Value::Bool(v) => row.push_bind(v),
                    };
                }
            });
            insert
                .build()
                .execute(&mut *conn)
                .await
                .context("writing buffered facts")?;
        }
        Ok(())
    }

    /// Writes every buffered row.
    pub(super) async fn flush(&mut self, conn: &mut SqliteConnection) -> StoreResult<()> {
        let tables: Vec<&'static str> = self.tables.keys().copied().collect();
        for table in tables {
            self.flush_table(conn, table).await?;
        }
        Ok(())
    }
}
