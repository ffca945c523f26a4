//! A plan run against the store: one SQL statement per list, then one per referenced or derived
//! field for all the rows above it at once (derived lists paged per parent with a window), and
//! the rows assembled into the response in the order the query asked for its fields. Ties in
//! any ordering are broken by `id`, as graph-node breaks them, so pages never overlap.

use super::catalogue::{self, Entity, Field, Shape};
use super::plan::{Item, ListQuery, What};
use super::sql::{Bind, Sql};
use super::values::{output, output_list};
use crate::row_budget::RowBudget;
use agentindex_indexer::store::Dialect;
use async_graphql::indexmap::IndexMap;
use async_graphql::{Name, Value as ConstValue};
use futures_util::future::BoxFuture;
use serde_json::Value as Json;
use sqlx::AnyPool;
use std::collections::HashMap;

/// Where rows come from, the chain the endpoint is limited to, and the request's row budget
/// (every statement's rows are charged to it as they are read, each statement itself bounded).
#[derive(Clone, Copy)]
pub(crate) struct Source<'a> {
    pub(crate) pool: &'a AnyPool,
    pub(crate) chain: Option<u64>,
    pub(crate) rows: &'a RowBudget,
}

/// Most rows one nested list may read for all its parents together: `first` bounds each
/// parent's page, this bounds a page of parents times their pages.
pub(crate) const MAX_NESTED_ROWS: i64 = 20_000;

/// Why running a plan stopped.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RunError {
    /// The store failed.
    #[error("Store error: {0}")]
    Store(#[from] sqlx::Error),
    /// The query asks more than is answered.
    #[error("{0}")]
    Refused(String),
}

/// One row read: the keys of the row it belongs to (derived lists), its own keys, then a value
/// per column.
type Row = Vec<Json>;

impl Source<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::of_pool(self.pool)
    }

    /// Charges `rows` read for `what` to the request's budget; past it the query is refused.
    fn charge(&self, rows: &[Row], what: &str) -> Result<(), RunError> {
        self.rows
            .charge(rows.len() as u64, what)
            .map_err(|refused| RunError::Refused(refused.to_string()))
    }

    /// The entities `query` asks for, as response objects. The page is chosen first, by the
    /// keys alone, and only its rows are read: SQLite reads a statement's columns for every row
    /// it sorts, and a broad search sorts every row to return a thousand.
    pub(crate) async fn list(&self, query: &ListQuery) -> Result<ConstValue, RunError> {
        let entity = query.entity;
        let keys = entity.keys.join(", ");
        let order = order_by(entity, query.order, query.descending);
        let columns = Columns::of(&query.items);
        let mut page = Sql::new(format!("SELECT {keys} {}", entity.from));
        self.chain_condition(entity, &mut page);
        page.push(" AND ").append(query.filter.clone());
        page.push(&order);
        page.push(" LIMIT ")
            .bind(Bind::Int(query.first))
            .push(" OFFSET ")
            .bind(Bind::Int(query.skip));
        let mut sql = Sql::new(format!(
            "SELECT json_array(NULL, json_array({keys}){}) {} AND ({keys}) IN (",
            columns.sql, entity.from
        ));
        self.name_chain(&mut sql);
        sql.append(page).push(")").push(&order);
        let rows = sql.rows(self.pool).await?;
        self.charge(&rows, entity.name)?;
        let objects = self.objects(&query.items, rows).await?;
        Ok(ConstValue::List(objects))
    }

    /// The entity with `id`, or null.
    pub(crate) async fn single(
        &self,
        entity: &'static Entity,
        id: &str,
        items: &[Item],
    ) -> Result<ConstValue, RunError> {
        let columns = Columns::of(items);
        let mut sql = Sql::new(format!(
            "SELECT json_array(NULL, json_array({}){}) {}",
            entity.keys.join(", "),
            columns.sql,
            entity.from
        ));
        self.chain_condition(entity, &mut sql);
        let mut by_id = async_graphql::indexmap::IndexMap::new();
        by_id.insert(Name::new("id"), ConstValue::String(id.to_string()));
        let condition = super::filter::condition(entity, &ConstValue::Object(by_id))
            .map_err(RunError::Refused)?;
        sql.push(" AND ").append(condition).push(" LIMIT 1");
        let rows = sql.rows(self.pool).await?;
        self.charge(&rows, entity.name)?;
        let mut objects = self.objects(items, rows).await?;
        Ok(objects.pop().unwrap_or(ConstValue::Null))
    }

    /// Puts the endpoint's chain (or NULL, for every chain) where an entity's SQL reads `$CHAIN`.
    fn name_chain(&self, sql: &mut Sql) {
        let chain = self.chain.map_or("NULL".to_string(), |c| c.to_string());
        sql.text = sql.text.replace("$CHAIN", &chain);
    }

    /// Limits rows to the endpoint's chain (and names it where an entity's SQL reads `$CHAIN`).
    /// The comparison is kept from the planner's choice of index (`+`): the chain is rarely what
    /// narrows a query down.
    fn chain_condition(&self, entity: &Entity, sql: &mut Sql) {
        self.name_chain(sql);
        if let (Some(chain), false) = (self.chain, entity.chain.is_empty()) {
            sql.push(&format!(" AND +{} = ", entity.chain))
                .bind(Bind::Int(chain as i64));
        }
    }

    /// `rows` as response objects, their references and derived lists read.
    fn objects<'s>(
        &'s self,
        items: &'s [Item],
        rows: Vec<Row>,
    ) -> BoxFuture<'s, Result<Vec<ConstValue>, RunError>> {
        Box::pin(async move {
            let columns = Columns::of(items);
            // Every referenced and derived field, read for all rows at once.
            let mut nested: Vec<Option<HashMap<String, Vec<ConstValue>>>> = Vec::new();
            for (index, item) in items.iter().enumerate() {
                let found = match &item.what {
                    What::Ref(field, sub) => {
                        let slot = columns.slots[index];
                        let keys: Vec<&Json> = rows
                            .iter()
                            .filter(|row| !row[slot].is_null())
                            .map(|row| &row[slot + 1])
                            .collect();
                        Some(self.referenced(field, sub, keys).await?)
                    }
                    What::Derived(field, query) => {
                        let keys: Vec<&Json> = rows.iter().map(|row| &row[1]).collect();
                        Some(self.derived(field, query, keys).await?)
                    }
                    _ => None,
                };
                nested.push(found);
            }
            let mut objects = Vec::with_capacity(rows.len());
            for row in &rows {
                let mut object = IndexMap::new();
                for (index, item) in items.iter().enumerate() {
                    let slot = columns.slots[index];
                    let value = match &item.what {
                        What::Typename(name) => ConstValue::String((*name).to_string()),
                        What::Column(field) => match field.shape {
                            Shape::List(scalar) => output_list(scalar, &row[slot]),
                            Shape::Scalar(scalar) => output(scalar, &row[slot]),
                            _ => ConstValue::Null,
                        },
                        What::Ref(..) => {
                            if row[slot].is_null() {
                                ConstValue::Null
                            } else {
                                let key = row[slot + 1].to_string();
                                nested[index]
                                    .as_ref()
                                    .and_then(|found| found.get(&key))
                                    .and_then(|found| found.first().cloned())
                                    .unwrap_or(ConstValue::Null)
                            }
                        }
                        What::Derived(..) => ConstValue::List(
                            nested[index]
                                .as_ref()
                                .and_then(|found| found.get(&row[1].to_string()))
                                .cloned()
                                .unwrap_or_default(),
                        ),
                    };
                    object.insert(Name::new(&item.key), value);
                }
                objects.push(ConstValue::Object(object));
            }
            Ok(objects)
        })
    }

    /// The entities `field` refers to, by their keys.
    async fn referenced(
        &self,
        field: &Field,
        items: &[Item],
        keys: Vec<&Json>,
    ) -> Result<HashMap<String, Vec<ConstValue>>, RunError> {
        let Shape::Ref { entity, .. } = field.shape else {
            unreachable!("only refs are referenced")
        };
        let target = catalogue::entity(entity).expect("refs name entities");
        if keys.is_empty() {
            return Ok(HashMap::new());
        }
        let columns = Columns::of(items);
        let mut sql = Sql::new(format!(
            "SELECT json_array(NULL, json_array({}){}) {} AND ",
            target.keys.join(", "),
            columns.sql,
            target.from
        ));
        sql.append(among(self.dialect(), target.keys, &keys));
        let rows = sql.rows(self.pool).await?;
        self.charge(&rows, field.name)?;
        let row_keys: Vec<String> = rows.iter().map(|row| row[1].to_string()).collect();
        let objects = self.objects(items, rows).await?;
        let mut out: HashMap<String, Vec<ConstValue>> = HashMap::new();
        for (key, object) in row_keys.into_iter().zip(objects) {
            out.entry(key).or_default().push(object);
        }
        Ok(out)
    }

    /// The derived list `field` of each parent with `keys`, paged per parent.
    async fn derived(
        &self,
        field: &Field,
        query: &ListQuery,
        keys: Vec<&Json>,
    ) -> Result<HashMap<String, Vec<ConstValue>>, RunError> {
        let Shape::Derived { by, .. } = field.shape else {
            unreachable!("only derived lists are derived")
        };
        if keys.is_empty() || query.first == 0 {
            return Ok(HashMap::new());
        }
        let target = query.entity;
        let columns = Columns::of(&query.items);
        let mut sql = Sql::new(format!(
            "SELECT row FROM (SELECT json_array(json_array({by}), json_array({}){}) AS row, \
             ROW_NUMBER() OVER (PARTITION BY {by}{}) AS rank {} AND ",
            target.keys.join(", "),
            columns.sql,
            order_by(target, query.order, query.descending),
            target.from,
            by = by.join(", "),
        ));
        sql.append(among(self.dialect(), by, &keys));
        sql.push(" AND ").append(query.filter.clone());
        sql.push(") AS ranked WHERE rank > ")
            .bind(Bind::Int(query.skip))
            .push(" AND rank <= ")
            .bind(Bind::Int(query.skip + query.first))
            .push(" ORDER BY rank LIMIT ")
            .bind(Bind::Int(MAX_NESTED_ROWS + 1));
        let rows = sql.rows(self.pool).await?;
        if rows.len() as i64 > MAX_NESTED_ROWS {
            return Err(RunError::Refused(format!(
                "`{}` would read more than {MAX_NESTED_ROWS} entities for this page; ask for fewer parents or a smaller `first`",
                field.name
            )));
        }
        self.charge(&rows, field.name)?;
        let parents: Vec<String> = rows.iter().map(|row| row[0].to_string()).collect();
        let objects = self.objects(&query.items, rows).await?;
        let mut out: HashMap<String, Vec<ConstValue>> = HashMap::new();
        for (parent, object) in parents.into_iter().zip(objects) {
            out.entry(parent).or_default().push(object);
        }
        Ok(out)
    }
}

/// `ORDER BY` the field, then `id` the same way.
fn order_by(entity: &Entity, order: &Field, descending: bool) -> String {
    let direction = if descending { "DESC" } else { "ASC" };
    let id = entity.id().compare_sql();
    if std::ptr::eq(order, entity.id()) {
        format!(" ORDER BY {id} {direction}")
    } else {
        format!(
            " ORDER BY {} {direction}, {id} {direction}",
            order.compare_sql()
        )
    }
}

/// `columns` (key expressions) among `keys` (JSON arrays of key values, as the rows gave
/// them). PostgreSQL compares the keys as JSON, each value keeping its type.
fn among(dialect: Dialect, columns: &[&str], keys: &[&Json]) -> Sql {
    if dialect == Dialect::Postgres {
        let list = Json::Array(keys.iter().map(|k| (*k).clone()).collect()).to_string();
        let mut sql = Sql::new(format!(
            "jsonb_build_array({}) IN (SELECT j.value FROM jsonb_array_elements(CAST(",
            columns.join(", ")
        ));
        sql.bind(Bind::Text(list)).push(" AS jsonb)) j)");
        return sql;
    }
    let picks: Vec<String> = (0..columns.len())
        .map(|i| format!("json_extract(j.value, '$[{i}]')"))
        .collect();
    let list = Json::Array(keys.iter().map(|k| (*k).clone()).collect()).to_string();
    let mut sql = Sql::new(format!(
        "({}) IN (SELECT {} FROM json_each(",
        columns.join(", "),
        picks.join(", ")
    ));
    sql.bind(Bind::Text(list)).push(") j)");
    sql
}

/// The columns a selection reads, and where each item's value sits in a row.
struct Columns {
    /// `, expr, expr…`, to follow the keys in `json_array(…)`.
    sql: String,
    /// Per item, the index of its first value in a row.
    slots: Vec<usize>,
}

impl Columns {
    fn of(items: &[Item]) -> Self {
        let mut sql = String::new();
        let mut slots = Vec::with_capacity(items.len());
        // A row starts with its parent's keys and its own.
        let mut next = 2;
        for item in items {
            slots.push(next);
            match &item.what {
                What::Column(field) => {
                    match field.shape {
                        Shape::List(_) => sql.push_str(&format!(", json({})", field.sql)),
                        _ => sql.push_str(&format!(", {}", field.sql)),
                    }
                    next += 1;
                }
                What::Ref(field, _) => {
                    let Shape::Ref { keys, .. } = field.shape else {
                        unreachable!("a ref item holds a ref field")
                    };
                    sql.push_str(&format!(", {}, json_array({})", field.sql, keys.join(", ")));
                    next += 2;
                }
                What::Typename(_) | What::Derived(..) => {}
            }
        }
        Self { sql, slots }
    }
}

#[cfg(test)]
#[path = "execute_tests.rs"]
mod tests;
