//! Copying an index from one database to another (SQLite to PostgreSQL, or back) without
//! indexing again: every table of [`schema::ALL`], row for row, in one transaction on the
//! target, which must be empty. What is copied of a table follows its declaration's kind: an
//! ordinary table every column, a search index its declared columns (each database keeps its own
//! search index over them), and a table kept by triggers (`agent_terms`) nothing, its rows being
//! written by the target's triggers as the rows they follow are copied. The tables are copied in
//! the order of [`schema::ALL`]; the migrations declare no foreign keys, so no order is needed.

use super::{Dialect, QueryContext, Store, StoreError, StoreResult};
use crate::schema::{self, Table, TableKind, agents, chain_cursor, documents};
use futures::TryStreamExt;
use sqlx::any::{AnyArguments, AnyRow, AnyTypeInfoKind};
use sqlx::{Arguments, Row, ValueRef};

/// The columns copied of `table`, as a SELECT lists them (`*`: every one), or `None` for a
/// table the target's triggers fill.
pub fn copied_columns(table: &Table) -> Option<String> {
    match table.kind {
        TableKind::Table => Some("*".into()),
        TableKind::SearchIndex => Some(table.column_list()),
        TableKind::KeptByTrigger => None,
    }
}

/// Every table copied, in the order of [`schema::ALL`], with the columns copied of it.
pub fn copied_tables() -> impl Iterator<Item = (&'static str, String)> {
    schema::ALL
        .iter()
        .filter_map(|table| copied_columns(table).map(|columns| (table.name, columns)))
}

/// Values bound per INSERT (well under both databases' limits).
const VALUES_PER_INSERT: usize = 8_000;

/// One cell, as read from the source.
enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

/// Copies every table of `from` into `to`, which must hold no index yet; calls `progress` with
/// each table and the rows copied from it. Returns the rows copied.
pub async fn copy(
    from: &Store,
    to: &Store,
    mut progress: impl FnMut(&str, u64),
) -> StoreResult<u64> {
    let occupied: i64 = sqlx::query_scalar(&format!(
        "SELECT (SELECT count(*) FROM {chain_cursor_table}) + (SELECT count(*) FROM {agents_table})
              + (SELECT count(*) FROM {documents_table})",
        chain_cursor_table = chain_cursor::NAME,
        agents_table = agents::NAME,
        documents_table = documents::NAME,
    ))
    .fetch_one(&to.read)
    .await
    .context("checking that the target is empty")?;
    if occupied > 0 {
        return Err(StoreError::Copy(
            "the target already holds an index; copy into an empty database".into(),
        ));
    }
    let dialect = to.dialect;
    let mut target = to.write.begin().await.context("starting the copy")?;
    // One snapshot for every table, while an indexer may go on writing.
    let mut source = from
        .read
        .begin_with(from.dialect.begin_snapshot())
        .await
        .context("reading the source")?;
    let mut total = 0;
    for (table, columns) in copied_tables() {
        let select = format!("SELECT {columns} FROM {table}");
        let mut rows = sqlx::query(&select).fetch(&mut *source);
        let mut batch: Vec<Vec<Cell>> = Vec::new();
        let mut names: Vec<String> = Vec::new();
        let mut copied = 0_u64;
        while let Some(row) = rows.try_next().await.context("reading a row to copy")? {
            if names.is_empty() {
                names = row
                    .columns()
                    .iter()
                    .map(|c| sqlx::Column::name(c).to_string())
                    .collect();
            }
            batch.push(cells(&row, table)?);
            if batch.len() * names.len() >= VALUES_PER_INSERT {
                copied += insert(&mut target, dialect, table, &names, &mut batch).await?;
            }
        }
        drop(rows);
        copied += insert(&mut target, dialect, table, &names, &mut batch).await?;
        progress(table, copied);
        total += copied;
    }
    source.rollback().await.context("ending the source read")?;
    target.commit().await.context("committing the copy")?;
    Ok(total)
}

/// A row's cells, read as the type the source stored each with.
fn cells(row: &AnyRow, table: &str) -> StoreResult<Vec<Cell>> {
    (0..row.columns().len())
        .map(|index| {
            let raw = row.try_get_raw(index).context("reading a cell to copy")?;
            if raw.is_null() {
                return Ok(Cell::Null);
            }
            let cell = match raw.type_info().kind() {
                AnyTypeInfoKind::SmallInt | AnyTypeInfoKind::Integer | AnyTypeInfoKind::BigInt => {
                    Cell::Int(row.try_get(index).context("an integer")?)
                }
                AnyTypeInfoKind::Bool => {
                    Cell::Int(i64::from(row.try_get::<bool, _>(index).context("a flag")?))
                }
                AnyTypeInfoKind::Real | AnyTypeInfoKind::Double => {
                    Cell::Real(row.try_get(index).context("a real")?)
                }
                AnyTypeInfoKind::Blob => Cell::Blob(row.try_get(index).context("a blob")?),
                AnyTypeInfoKind::Text => Cell::Text(row.try_get(index).context("a text")?),
                AnyTypeInfoKind::Null => Cell::Null,
            };
            Ok(cell)
        })
        .collect::<StoreResult<Vec<Cell>>>()
        .map_err(|error| StoreError::Copy(format!("table {table}: {error}")))
}

/// Inserts and empties `batch`; a NULL is written as the literal, so it takes each column's
/// type whatever the column is.
async fn insert(
    target: &mut sqlx::AnyConnection,
    dialect: Dialect,
    table: &str,
    names: &[String],
    batch: &mut Vec<Vec<Cell>>,
) -> StoreResult<u64> {
    if batch.is_empty() {
        return Ok(0);
    }
    let mut sql = format!("INSERT INTO {table} ({}) VALUES ", names.join(", "));
    let mut arguments = AnyArguments::default();
    let mut bound = 0;
    for (r, row) in batch.iter().enumerate() {
        sql.push_str(if r == 0 { "(" } else { ", (" });
        for (c, cell) in row.iter().enumerate() {
            if c > 0 {
                sql.push_str(", ");
            }
            let added = match cell {
                Cell::Null => {
                    sql.push_str("NULL");
                    continue;
                }
                Cell::Int(v) => arguments.add(*v),
                Cell::Real(v) => arguments.add(*v),
                Cell::Text(v) => arguments.add(v.clone()),
                Cell::Blob(v) => arguments.add(v.clone()),
            };
            added.map_err(|e| StoreError::Copy(format!("table {table}: {e}")))?;
            bound += 1;
            match dialect {
                Dialect::Sqlite => sql.push('?'),
                Dialect::Postgres => sql.push_str(&format!("${bound}")),
            }
        }
        sql.push(')');
    }
    sqlx::query_with(&sql, arguments)
        .execute(&mut *target)
        .await
        .map_err(|e| StoreError::Copy(format!("writing table {table}: {e}")))?;
    let rows = batch.len() as u64;
    batch.clear();
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::copied_tables;
    use crate::schema::{self, TableKind, agent_registration_text, agent_search, agent_terms};
    use crate::store::Store;

    /// A table added by a migration must be copied too (or declared as kept by triggers).
    #[tokio::test]
    async fn every_table_of_the_schema_is_copied() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = Store::open(&format!("sqlite://{}", dir.path().join("t.db").display()))
            .await
            .expect("the store opens");
        let tables: Vec<String> = sqlx::query_scalar(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\'
               AND name NOT LIKE 'agent_search_%' AND name NOT LIKE 'agent_registration_text_%'
             ORDER BY name",
        )
        .fetch_all(store.reader())
        .await
        .expect("the schema");
        let mut copied: Vec<String> = copied_tables().map(|(t, _)| t.to_string()).collect();
        let kept_by_triggers = schema::ALL
            .iter()
            .filter(|t| t.kind == TableKind::KeptByTrigger);
        copied.extend(kept_by_triggers.map(|t| t.name.to_string()));
        copied.sort();
        assert_eq!(tables, copied);
        store.close().await;
    }

    /// Search indexes are copied by their declared columns, other tables whole, and
    /// `agent_terms` is left to the triggers that follow `agent_skills`.
    #[test]
    fn each_kind_of_table_is_copied_as_it_says() {
        let copied: Vec<(&str, String)> = copied_tables().collect();
        let columns = |name: &str| {
            copied
                .iter()
                .find(|(table, _)| *table == name)
                .map(|(_, columns)| columns.as_str())
        };
        assert_eq!(
            columns(agent_search::NAME),
            Some("agent_key, name, description, skills, tags")
        );
        assert_eq!(
            columns(agent_registration_text::NAME),
            Some("agent_key, name, description")
        );
        assert_eq!(columns(agent_terms::NAME), None);
        assert_eq!(columns(schema::agents::NAME), Some("*"));
        let kept_by_triggers = schema::ALL
            .iter()
            .filter(|t| t.kind == TableKind::KeptByTrigger);
        assert_eq!(copied.len(), schema::ALL.len() - kept_by_triggers.count());
    }
}
