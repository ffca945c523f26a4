//! A plan run against the store: one SQL statement per list, then one per referenced or derived
//! field for all the rows above it at once, and the rows assembled into the response in the
//! order the query asked for its fields. A derived list is read a page per parent, each page
//! its own `UNION ALL` branch that reads its parent's children in order and stops at the page
//! (`crate::read::pages`): feedback is permissionless, and ranking every child of every parent
//! to cut the pages let one spammed agent make every `agents { feedback(first: 1) }` sort all
//! its feedback. Ties in any ordering are broken by `id`, as graph-node breaks them, so pages
//! never overlap. The statements themselves are written by [`statements`], for the pool's
//! database.

use super::catalogue::{self, Entity, Field, Shape};
use super::plan::{Item, ListQuery, What};
use super::refusal::Refusal;
use super::sql::Bind;
use super::statements::{self, Columns};
use super::values::{output, output_list};
use crate::read::pages::PARENTS_PER_STATEMENT;
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

    /// The entities `query` asks for, as response objects (`statements::list` says how the
    /// page is read).
    pub(crate) async fn list(&self, query: &ListQuery) -> Result<ConstValue, RunError> {
        let sql = statements::list(self.dialect(), query, self.chain);
        let rows = sql.rows(self.pool).await?;
        self.charge(&rows, query.entity.name)?;
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
        let sql = statements::single(self.dialect(), entity, id, items, self.chain)?;
        let rows = sql.rows(self.pool).await?;
        self.charge(&rows, entity.name)?;
        let mut objects = self.objects(items, rows).await?;
        Ok(objects.pop().unwrap_or(ConstValue::Null))
    }

    /// `rows` as response objects, their references and derived lists read.
    fn objects<'s>(
        &'s self,
        items: &'s [Item],
        rows: Vec<Row>,
    ) -> BoxFuture<'s, Result<Vec<ConstValue>, RunError>> {
        Box::pin(async move {
            let columns = Columns::of(self.dialect(), items);
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
        let target = catalogue::of(self.dialect())
            .entity(entity)
            .expect("refs name entities");
        if keys.is_empty() {
            return Ok(HashMap::new());
        }
        let sql = statements::referenced(self.dialect(), target, items, &keys);
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
            let read = statements::pages(self.dialect(), query, paging, chunk, room)
                .rows(self.pool)
                .await?;
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

#[cfg(test)]
#[path = "execute_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "derived_tests.rs"]
mod derived_tests;
