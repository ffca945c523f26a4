//! A plan run against the store: one SQL statement per list, then one per referenced or derived
//! field for all the rows above it at once, and the rows assembled into the response in the
//! order the query asked for its fields. A derived list is read a page per parent, each page
//! its own `UNION ALL` branch that reads its parent's children in order and stops at the page
//! (`crate::read::pages`): feedback is permissionless, and ranking every child of every parent
//! to cut the pages let one spammed agent make every `agents { feedback(first: 1) }` sort all
//! its feedback. Ties in any ordering are broken by `id`, as graph-node breaks them, so pages
//! never overlap.

use super::catalogue::{self, Entity, Field, Paging, Shape};
use super::plan::{Item, ListQuery, What};
use super::refusal::Refusal;
use super::sql::{Bind, Sql};
use super::values::{output, output_list};
use crate::read::pages::{PARENTS_PER_STATEMENT, union_of_pages};
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
    /// A value of the query cannot be read (an id that is not one).
    #[error(transparent)]
    Query(#[from] Refusal),
}

/// One row read: the place of the parent it belongs to among those read (derived lists), its
/// own keys, then a value per column.
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
        let condition = super::filter::condition(entity, &ConstValue::Object(by_id))?;
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
                        let slot = columns.slots[index];
                        let parents: Vec<&Json> = rows.iter().map(|row| &row[slot]).collect();
                        Some(self.derived(field, query, parents).await?)
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
                                .and_then(|found| found.get(&row[slot].to_string()))
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

    /// The derived list `field` of each parent, paged per parent: `parents` holds each parent's
    /// values of the field's links (a JSON array, as its row gave them). The answer is keyed by
    /// those values' text. At most [`MAX_NESTED_ROWS`] rows are read for all parents together;
    /// past them the query is refused.
    async fn derived(
        &self,
        field: &Field,
        query: &ListQuery,
        parents: Vec<&Json>,
    ) -> Result<HashMap<String, Vec<ConstValue>>, RunError> {
        let Shape::Derived { paging, .. } = field.shape else {
            unreachable!("only derived lists are derived")
        };
        // Parents with a NULL link have no children; a parent read twice is paged once.
        let mut seen = std::collections::HashSet::new();
        let parents: Vec<(String, Vec<Bind>)> = parents
            .into_iter()
            .filter(|parent| seen.insert(parent.to_string()))
            .filter_map(|parent| {
                let values = link_values(parent, paging.links.len())?;
                Some((parent.to_string(), values))
            })
            .collect();
        if parents.is_empty() || query.first == 0 {
            return Ok(HashMap::new());
        }
        let mut rows: Vec<Row> = Vec::new();
        let mut owners: Vec<&str> = Vec::new();
        for chunk in parents.chunks(PARENTS_PER_STATEMENT) {
            let room = MAX_NESTED_ROWS + 1 - rows.len() as i64;
            let read = pages(query, paging, chunk, room).rows(self.pool).await?;
            if (rows.len() + read.len()) as i64 > MAX_NESTED_ROWS {
                return Err(RunError::Refused(format!(
                    "`{}` would read more than {MAX_NESTED_ROWS} entities for this page; ask for fewer parents or a smaller `first`",
                    field.name
                )));
            }
            self.charge(&read, field.name)?;
            for row in read {
                let owner = row[0]
                    .as_u64()
                    .and_then(|place| chunk.get(usize::try_from(place).ok()?))
                    .map(|(key, _)| key.as_str())
                    .ok_or_else(|| {
                        RunError::Store(sqlx::Error::Decode(
                            format!(
                                "a page of `{}` names no parent read: {}",
                                field.name, row[0]
                            )
                            .into(),
                        ))
                    })?;
                owners.push(owner);
                rows.push(row);
            }
        }
        let objects = self.objects(&query.items, rows).await?;
        let mut out: HashMap<String, Vec<ConstValue>> = HashMap::new();
        for (owner, object) in owners.into_iter().zip(objects) {
            out.entry(owner.to_string()).or_default().push(object);
        }
        Ok(out)
    }
}

/// One statement reading the page `query` asks of each of `parents` (their values of the
/// links of `paging`), at most `room` rows in all. Each parent's page is its own branch
/// (`crate::read::pages`): the link columns bound to the parent's values, read through the
/// index `paging` names for the page's order, then `LIMIT first OFFSET skip`. A parent whose
/// rows that index holds in the page's order costs first + skip index entries however many
/// rows it has, and any other a sort of its own rows only. Each row starts with its parent's
/// place in `parents`. The branches carry their order keys out (`o0`, `o1`), and the union is
/// ordered by them: a parent's rows come back in its page's order whatever order the database
/// returns the branches in.
fn pages(query: &ListQuery, paging: &Paging, parents: &[(String, Vec<Bind>)], room: i64) -> Sql {
    let target = query.entity;
    let rest = target
        .from
        .strip_prefix(&format!("FROM {} ", paging.table))
        .unwrap_or_else(|| panic!("{} is read from {} first", target.name, paging.table));
    let from = format!(
        "FROM {} INDEXED BY {} {rest}",
        paging.table,
        paging.index_for(query.order)
    );
    let columns = Columns::of(&query.items);
    let keys = target.keys.join(", ");
    let terms = order_terms(target, query.order);
    let direction = if query.descending { "DESC" } else { "ASC" };
    let carried: String = terms
        .iter()
        .enumerate()
        .map(|(n, term)| format!(", {term} AS o{n}"))
        .collect();
    let mut sql = Sql::new("SELECT row FROM (");
    union_of_pages(&mut sql, parents, |sql, place, (_, values)| {
        sql.push(&format!(
            "SELECT json_array({place}, json_array({keys}){}) AS row{carried} {from}",
            columns.sql
        ));
        for (link, value) in paging.links.iter().zip(values) {
            sql.push(&format!(" AND {} = ", link.child))
                .bind(value.clone());
        }
        sql.push(" AND ").append(query.filter.clone());
        sql.push(&order_by(target, query.order, query.descending));
        sql.push(" LIMIT ")
            .bind(Bind::Int(query.first))
            .push(" OFFSET ")
            .bind(Bind::Int(query.skip));
    });
    let outer: Vec<String> = (0..terms.len())
        .map(|n| format!("pages.o{n} {direction}"))
        .collect();
    sql.push(&format!(") AS pages ORDER BY {} LIMIT ", outer.join(", ")))
        .bind(Bind::Int(room));
    sql
}

/// A parent's values of its `count` links as binds, from the JSON array its row read; none for
/// a parent with a NULL among them (no child's column equals NULL).
fn link_values(parent: &Json, count: usize) -> Option<Vec<Bind>> {
    let values = parent.as_array().filter(|values| values.len() == count)?;
    values
        .iter()
        .map(|value| match value {
            Json::String(text) => Some(Bind::Text(text.clone())),
            Json::Number(number) => number
                .as_i64()
                .map(Bind::Int)
                .or_else(|| number.as_f64().map(Bind::Real)),
            Json::Bool(flag) => Some(Bind::Int(i64::from(*flag))),
            Json::Null | Json::Array(_) | Json::Object(_) => None,
        })
        .collect()
}

/// `ORDER BY` the field, then `id` the same way.
fn order_by(entity: &Entity, order: &Field, descending: bool) -> String {
    let direction = if descending { "DESC" } else { "ASC" };
    let terms: Vec<String> = order_terms(entity, order)
        .iter()
        .map(|term| format!("{term} {direction}"))
        .collect();
    format!(" ORDER BY {}", terms.join(", "))
}

/// What an ordering by `order` compares: the field, then `id` unless the field is `id`.
fn order_terms(entity: &Entity, order: &Field) -> Vec<&'static str> {
    let id = entity.id().compare_sql();
    if std::ptr::eq(order, entity.id()) {
        vec![id]
    } else {
        vec![order.compare_sql(), id]
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
                What::Derived(field, _) => {
                    let Shape::Derived { paging, .. } = field.shape else {
                        unreachable!("a derived item holds a derived field")
                    };
                    let parent: Vec<&str> = paging.links.iter().map(|link| link.parent).collect();
                    sql.push_str(&format!(", json_array({})", parent.join(", ")));
                    next += 1;
                }
                What::Typename(_) => {}
            }
        }
        Self { sql, slots }
    }
}

#[cfg(test)]
#[path = "execute_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "derived_tests.rs"]
mod derived_tests;
