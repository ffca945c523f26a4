//! Rows of any declared per-agent table (keyed by `agent_key`), many agents at once, for the
//! row DataLoader (`graphql::loaders::AgentRowLoader`): a signal kept one row per agent is read
//! by naming its declaration, with no reader of its own. Each cell is read as its declared
//! type ([`Cells`]).

use agentindex_indexer::schema::{Column, SqlType, Table};
use agentindex_indexer::store::Dialect;
use agentindex_indexer::store::in_list::push_in;
use sqlx::any::AnyRow;
use sqlx::{Any, AnyPool, QueryBuilder, Row};
use std::collections::HashMap;
use std::sync::Arc;

/// Keys bound per statement.
const KEYS_PER_STATEMENT: usize = 500;

/// One cell, as its column's declared type.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell {
    Null,
    Integer(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

/// One row's cells by column name.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Cells(HashMap<&'static str, Cell>);

impl Cells {
    /// The integer in `column` (`None` when NULL or of another type).
    pub(crate) fn integer(&self, column: Column) -> Option<i64> {
        match self.0.get(column.name) {
            Some(Cell::Integer(value)) => Some(*value),
            _ => None,
        }
    }

    /// The number in `column` (`None` when NULL or of another type).
    pub(crate) fn real(&self, column: Column) -> Option<f64> {
        match self.0.get(column.name) {
            Some(Cell::Real(value)) => Some(*value),
            _ => None,
        }
    }

    /// The text in `column` (`None` when NULL or of another type).
    pub(crate) fn text(&self, column: Column) -> Option<&str> {
        match self.0.get(column.name) {
            Some(Cell::Text(value)) => Some(value),
            _ => None,
        }
    }
}

/// The row of `table` of each of `keys` that has one. `table` must be keyed by `agent_key`.
pub(crate) async fn of_agents(
    pool: &AnyPool,
    table: &'static Table,
    keys: &[String],
) -> sqlx::Result<HashMap<String, Arc<Cells>>> {
    let mut out = HashMap::new();
    for chunk in keys.chunks(KEYS_PER_STATEMENT) {
        let mut query = QueryBuilder::<Any>::new(format!(
            "SELECT {} FROM {} WHERE agent_key",
            table.column_list(),
            table.name
        ));
        push_in(&mut query, chunk.iter().cloned());
        let rows = Dialect::of_pool(pool)
            .portable(query)
            .build()
            .fetch_all(pool)
            .await?;
        for row in rows {
            let key: String = row.try_get("agent_key")?;
            out.insert(key, Arc::new(cells(table, &row)?));
        }
    }
    Ok(out)
}

/// `row`'s cells, each read as `table` declares its column.
fn cells(table: &Table, row: &AnyRow) -> sqlx::Result<Cells> {
    let mut cells = HashMap::with_capacity(table.columns.len());
    for column in table.columns {
        let name = column.name;
        let cell = match column.ty {
            SqlType::Integer => row.try_get::<Option<i64>, _>(name)?.map(Cell::Integer),
            SqlType::Real => row.try_get::<Option<f64>, _>(name)?.map(Cell::Real),
            SqlType::Text => row.try_get::<Option<String>, _>(name)?.map(Cell::Text),
            SqlType::Blob => row.try_get::<Option<Vec<u8>>, _>(name)?.map(Cell::Blob),
        };
        cells.insert(name, cell.unwrap_or(Cell::Null));
    }
    Ok(Cells(cells))
}
