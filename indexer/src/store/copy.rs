//! Copying an index from one database to another (SQLite to PostgreSQL, or back) without
//! indexing again: every table, row for row, in one transaction on the target, which must be
//! empty. The search tables are copied by their visible columns (each database keeps its own
//! search index over them), and `agent_terms` is left to the trigger that derives it from
//! `agent_skills`.

use super::{Dialect, QueryContext, Store, StoreError, StoreResult};
use crate::schema::{
    agent_contract_events, agent_documents, agent_profiles, agent_registration_text,
    agent_registrations, agent_reputation, agent_search, agent_skills, agent_snapshots, agents,
    block_window, chain_cursor, counted_payments, document_lints, documents, events, feedback,
    feedback_responses, feedback_revocations, identity_approvals, identity_metadata,
    identity_registrations, identity_transfers, identity_uri_updates, outflows, payment_bindings,
    payments, ratings, registry_events, reputation_dirty, reputation_feed_pages, reputation_feeds,
    reputation_rules, trust_agents, trust_epochs, trust_payers, validation_requests,
    validation_responses, watched_agents, withdrawals, x402_channels,
};
use futures::TryStreamExt;
use sqlx::any::{AnyArguments, AnyRow, AnyTypeInfoKind};
use sqlx::{Arguments, Row, ValueRef};

/// Every table of the schema but the derived `agent_terms`, with the columns copied (`*`: all).
pub const TABLES: &[(&str, &str)] = &[
    (chain_cursor::NAME, "*"),
    (block_window::NAME, "*"),
    (events::NAME, "*"),
    (watched_agents::NAME, "*"),
    (payment_bindings::NAME, "*"),
    (identity_registrations::NAME, "*"),
    (identity_transfers::NAME, "*"),
    (identity_uri_updates::NAME, "*"),
    (identity_metadata::NAME, "*"),
    (identity_approvals::NAME, "*"),
    (feedback::NAME, "*"),
    (feedback_revocations::NAME, "*"),
    (feedback_responses::NAME, "*"),
    (validation_requests::NAME, "*"),
    (validation_responses::NAME, "*"),
    (agent_contract_events::NAME, "*"),
    (agent_snapshots::NAME, "*"),
    (registry_events::NAME, "*"),
    (ratings::NAME, "*"),
    (withdrawals::NAME, "*"),
    (payments::NAME, "*"),
    (outflows::NAME, "*"),
    (x402_channels::NAME, "*"),
    (agents::NAME, "*"),
    (documents::NAME, "*"),
    (document_lints::NAME, "*"),
    (agent_documents::NAME, "*"),
    (agent_profiles::NAME, "*"),
    (agent_skills::NAME, "*"),
    (
        agent_search::NAME,
        "agent_key, name, description, skills, tags",
    ),
    (agent_registrations::NAME, "*"),
    (
        agent_registration_text::NAME,
        "agent_key, name, description",
    ),
    (agent_reputation::NAME, "*"),
    (reputation_rules::NAME, "*"),
    (reputation_dirty::NAME, "*"),
    (counted_payments::NAME, "*"),
    (trust_epochs::NAME, "*"),
    (trust_agents::NAME, "*"),
    (trust_payers::NAME, "*"),
    (reputation_feeds::NAME, "*"),
    (reputation_feed_pages::NAME, "*"),
];

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
    let mut source = from.read.begin().await.context("reading the source")?;
    if from.dialect == Dialect::Postgres {
        // One snapshot for every table, while an indexer may go on writing.
        sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            .execute(&mut *source)
            .await
            .context("taking one snapshot of the source")?;
    }
    let mut total = 0;
    for (table, columns) in TABLES {
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
    use super::TABLES;
    use crate::schema::agent_terms;
    use crate::store::Store;

    /// A table added by a migration must be copied too (or named here as derived).
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
        let mut copied: Vec<String> = TABLES.iter().map(|(t, _)| t.to_string()).collect();
        copied.push(agent_terms::NAME.into());
        copied.sort();
        assert_eq!(tables, copied);
        store.close().await;
    }
}
