//! A plan run against the store: one SQL statement per list, then one per referenced or derived
//! field for all the rows above it at once, and the rows written into the response in the
//! order the query asked for its fields. A reference the catalogue can read from the row at
//! hand (`Field::correlated`, an agent's registration file) is read in that row's own
//! statement instead: a page of agents with their files is one statement, not two, and the
//! file's id is read once. A derived list is read a page per parent, each page its own `UNION
//! ALL` branch that reads its parent's children in order and stops at the page
//! (`crate::read::pages`): feedback is permissionless, and ranking every child of every parent
//! to cut the pages let one spammed agent make every `agents { feedback(first: 1) }` sort all
//! its feedback. Ties in any ordering are broken by `id`, as graph-node breaks them, so pages
//! never overlap. The statements themselves are written by [`statements`], for the pool's
//! database. Each row's values are written as JSON straight from the row's text ([`written`]):
//! a page of a thousand agents is some thirty thousand values, and none is built as a value of
//! its own; the objects of referenced and derived fields are written first, each into its own
//! buffer ([`nested`]), and copied into their parents'.
//!
//! [`written`]: super::written
//! [`nested`]: super::nested

use super::catalogue::{self, Entity, Field, Shape};
use super::nested::{Found, Nested};
use super::plan::{Item, ListQuery, What};
use super::refusal::Refusal;
use super::sql::{Bind, Row, parse_row, parse_rows};
use super::statements::{self, Columns};
use super::written::{write_output, write_output_list, write_str};
use crate::read::pages::PARENTS_PER_STATEMENT;
use crate::row_budget::RowBudget;
use agentindex_indexer::store::Dialect;
use async_graphql::indexmap::IndexMap;
use futures_util::future::BoxFuture;
use serde_json::Value as Json;
use serde_json::value::RawValue;
use sqlx::AnyPool;
use std::ops::Range;

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

/// A row whose values are not the JSON they claim to be.
fn unreadable(error: serde_json::Error) -> RunError {
    RunError::Store(sqlx::Error::Decode(Box::new(error)))
}

/// A value of a row read as JSON: keys and links, whose text written back (`to_string`) is what
/// the objects found for them are filed under, so that the same values written differently by
/// two statements still match.
fn json_of(raw: &RawValue) -> Result<Json, RunError> {
    serde_json::from_str(raw.get()).map_err(unreadable)
}

/// The items a response object writes, in the order it holds their keys: each key once, in
/// the place of its first item, with its last item's value (as inserting every item in turn
/// into an ordered map leaves them).
fn response_order(items: &[Item]) -> Vec<usize> {
    let mut places: IndexMap<&str, usize> = IndexMap::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        places.insert(item.key.as_str(), index);
    }
    places.into_values().collect()
}

impl Source<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::of_pool(self.pool)
    }

    /// Charges `rows` read for `what` to the request's budget; past it the query is refused.
    fn charge(&self, rows: usize, what: &str) -> Result<(), RunError> {
        self.rows
            .charge(rows as u64, what)
            .map_err(|refused| RunError::Refused(refused.to_string()))
    }

    /// Writes the entities `query` asks for into `out`, a JSON array of response objects
    /// (`statements::list` says how the page is read).
    pub(crate) async fn list(&self, query: &ListQuery, out: &mut Vec<u8>) -> Result<(), RunError> {
        let sql = statements::list(self.dialect(), query, self.chain);
        let texts = sql.rows(self.pool).await?;
        let rows = parse_rows(&texts)?;
        self.charge(rows.len(), query.entity.name)?;
        out.push(b'[');
        let columns = Columns::of(self.dialect(), &query.items);
        self.objects(&query.items, columns, &rows, out).await?;
        out.push(b']');
        Ok(())
    }

    /// Writes the entity with `id` into `out`, or null.
    pub(crate) async fn single(
        &self,
        entity: &'static Entity,
        id: &str,
        items: &[Item],
        out: &mut Vec<u8>,
    ) -> Result<(), RunError> {
        let sql = statements::single(self.dialect(), entity, id, items, self.chain)?;
        let texts = sql.rows(self.pool).await?;
        let rows = parse_rows(&texts)?;
        self.charge(rows.len(), entity.name)?;
        let mut text = Vec::new();
        let columns = Columns::of(self.dialect(), items);
        let objects = self.objects(items, columns, &rows, &mut text).await?;
        match objects.last() {
            Some(object) => out.extend_from_slice(&text[object.clone()]),
            None => out.extend_from_slice(b"null"),
        }
        Ok(())
    }

    /// Writes `rows` into `out` as response objects, a comma between each two, their
    /// references and derived lists read first; returns where each object is in `out`.
    /// `columns` says where each item's value is in a row.
    fn objects<'s>(
        &'s self,
        items: &'s [Item],
        columns: Columns,
        rows: &'s [Row<'s>],
        out: &'s mut Vec<u8>,
    ) -> BoxFuture<'s, Result<Vec<Range<usize>>, RunError>> {
        Box::pin(async move {
            // Every referenced and derived field, read for all rows at once.
            let mut nested: Vec<Option<Nested>> = Vec::with_capacity(items.len());
            for (index, item) in items.iter().enumerate() {
                let slot = columns.slots[index];
                let found = match &item.what {
                    What::Ref(field, sub) if field.correlated.is_some() => {
                        Some(self.folded(field, sub, rows, slot).await?)
                    }
                    What::Ref(field, sub) => {
                        // A row whose reference is null refers to nothing.
                        let mut keys = Vec::new();
                        let mut row_keys = Vec::with_capacity(rows.len());
                        for row in rows {
                            if row[slot].get() == "null" {
                                row_keys.push(None);
                                continue;
                            }
                            let key = json_of(row[slot + 1])?;
                            row_keys.push(Some(key.to_string()));
                            keys.push(key);
                        }
                        let found = self.referenced(field, sub, keys).await?;
                        Some(Nested::Keyed { found, row_keys })
                    }
                    What::Derived(field, query) => {
                        let parents = rows
                            .iter()
                            .map(|row| json_of(row[slot]))
                            .collect::<Result<Vec<_>, _>>()?;
                        let row_keys = parents.iter().map(|p| Some(p.to_string())).collect();
                        let found = self.derived(field, query, parents).await?;
                        Some(Nested::Keyed { found, row_keys })
                    }
                    _ => None,
                };
                nested.push(found);
            }
            // Each key as it is written, once for all rows.
            let order: Vec<(usize, Vec<u8>)> = response_order(items)
                .into_iter()
                .map(|index| {
                    let mut key = Vec::new();
                    write_str(&items[index].key, &mut key);
                    key.push(b':');
                    (index, key)
                })
                .collect();
            let mut objects = Vec::with_capacity(rows.len());
            for (place, row) in rows.iter().enumerate() {
                if place > 0 {
                    out.push(b',');
                }
                let start = out.len();
                out.push(b'{');
                for (n, (index, key)) in order.iter().enumerate() {
                    if n > 0 {
                        out.push(b',');
                    }
                    let index = *index;
                    let item = &items[index];
                    out.extend_from_slice(key);
                    let slot = columns.slots[index];
                    let nested = || nested[index].as_ref().expect("read above");
                    match &item.what {
                        What::Typename(name) => write_str(name, out),
                        What::Column(field) => match field.shape {
                            Shape::List(scalar) => {
                                write_output_list(scalar, row[slot], out).map_err(unreadable)?
                            }
                            Shape::Scalar(scalar) => {
                                write_output(scalar, row[slot], out).map_err(unreadable)?
                            }
                            _ => out.extend_from_slice(b"null"),
                        },
                        What::Ref(..) => match nested().first_of(place) {
                            Some(object) => out.extend_from_slice(object),
                            None => out.extend_from_slice(b"null"),
                        },
                        What::Derived(..) => {
                            out.push(b'[');
                            for (n, object) in nested().all_of(place).enumerate() {
                                if n > 0 {
                                    out.push(b',');
                                }
                                out.extend_from_slice(object);
                            }
                            out.push(b']');
                        }
                    }
                }
                out.push(b'}');
                objects.push(start..out.len());
            }
            Ok(objects)
        })
    }

    /// The rows `field` refers to as `rows` hold them at `slot` (read through the field's
    /// `correlated` SQL, `statements::Columns`): each row's object, none where the row or its
    /// id is null.
    async fn folded(
        &self,
        field: &Field,
        items: &[Item],
        rows: &[Row<'_>],
        slot: usize,
    ) -> Result<Nested, RunError> {
        let Shape::Ref { entity, .. } = field.shape else {
            unreachable!("only refs are referenced")
        };
        let target = catalogue::of(self.dialect())
            .entity(entity)
            .expect("refs name entities");
        let mut found = Vec::new();
        let mut of_row = Vec::with_capacity(rows.len());
        for row in rows {
            let value = row[slot].get();
            let referenced = match value {
                "null" => None,
                _ => Some(parse_row(value)?).filter(|row| row[0].get() != "null"),
            };
            of_row.push(referenced.is_some().then_some(found.len()));
            found.extend(referenced);
        }
        self.charge(found.len(), field.name)?;
        let mut text = Vec::new();
        let columns = Columns::folded(self.dialect(), target, items);
        let objects = self.objects(items, columns, &found, &mut text).await?;
        let of_row = of_row
            .into_iter()
            .map(|at| at.map(|at| objects[at].clone()))
            .collect();
        Ok(Nested::Own { text, of_row })
    }

    /// The entities `field` refers to, by their keys (JSON arrays of key values, as the rows
    /// referring to them gave them).
    async fn referenced(
        &self,
        field: &Field,
        items: &[Item],
        keys: Vec<Json>,
    ) -> Result<Found, RunError> {
        let Shape::Ref { entity, .. } = field.shape else {
            unreachable!("only refs are referenced")
        };
        let target = catalogue::of(self.dialect())
            .entity(entity)
            .expect("refs name entities");
        if keys.is_empty() {
            return Ok(Found::default());
        }
        let keys: Vec<&Json> = keys.iter().collect();
        let sql = statements::referenced(self.dialect(), target, items, &keys);
        let texts = sql.rows(self.pool).await?;
        let rows = parse_rows(&texts)?;
        self.charge(rows.len(), field.name)?;
        let row_keys = rows
            .iter()
            .map(|row| json_of(row[1]).map(|key| key.to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        let mut found = Found::default();
        let columns = Columns::of(self.dialect(), items);
        let objects = self.objects(items, columns, &rows, &mut found.text).await?;
        for (key, object) in row_keys.into_iter().zip(objects) {
            found.by_key.entry(key).or_default().push(object);
        }
        Ok(found)
    }

    /// The derived list `field` of each parent, paged per parent: `parents` holds each parent's
    /// values of the field's links (a JSON array, as its row gave them). The answer is keyed by
    /// those values' text. At most [`MAX_NESTED_ROWS`] rows are read for all parents together;
    /// past them the query is refused.
    async fn derived(
        &self,
        field: &Field,
        query: &ListQuery,
        parents: Vec<Json>,
    ) -> Result<Found, RunError> {
        let Shape::Derived { paging, .. } = field.shape else {
            unreachable!("only derived lists are derived")
        };
        // Parents with a NULL link have no children; a parent read twice is paged once.
        let mut seen = std::collections::HashSet::new();
        let parents: Vec<(String, Vec<Bind>)> = parents
            .into_iter()
            .filter(|parent| seen.insert(parent.to_string()))
            .filter_map(|parent| {
                let values = link_values(&parent, paging.links.len())?;
                Some((parent.to_string(), values))
            })
            .collect();
        if parents.is_empty() || query.first == 0 {
            return Ok(Found::default());
        }
        let mut texts: Vec<String> = Vec::new();
        let mut owners: Vec<&str> = Vec::new();
        for chunk in parents.chunks(PARENTS_PER_STATEMENT) {
            let room = MAX_NESTED_ROWS + 1 - texts.len() as i64;
            let read = statements::pages(self.dialect(), query, paging, chunk, room)
                .rows(self.pool)
                .await?;
            if (texts.len() + read.len()) as i64 > MAX_NESTED_ROWS {
                return Err(RunError::Refused(format!(
                    "`{}` would read more than {MAX_NESTED_ROWS} entities for this page; ask for fewer parents or a smaller `first`",
                    field.name
                )));
            }
            self.charge(read.len(), field.name)?;
            for text in read {
                let place = json_of(parse_row(&text)?[0])?;
                let owner = place
                    .as_u64()
                    .and_then(|place| chunk.get(usize::try_from(place).ok()?))
                    .map(|(key, _)| key.as_str())
                    .ok_or_else(|| {
                        RunError::Store(sqlx::Error::Decode(
                            format!("a page of `{}` names no parent read: {place}", field.name)
                                .into(),
                        ))
                    })?;
                owners.push(owner);
                texts.push(text);
            }
        }
        let rows = parse_rows(&texts)?;
        let mut found = Found::default();
        let columns = Columns::of(self.dialect(), &query.items);
        let objects = self
            .objects(&query.items, columns, &rows, &mut found.text)
            .await?;
        for (owner, object) in owners.into_iter().zip(objects) {
            found
                .by_key
                .entry(owner.to_string())
                .or_default()
                .push(object);
        }
        Ok(found)
    }
}

#[cfg(test)]
impl Source<'_> {
    /// [`Source::list`]'s array, read back as JSON.
    pub(crate) async fn list_json(&self, query: &ListQuery) -> Result<Json, RunError> {
        let mut out = Vec::new();
        self.list(query, &mut out).await?;
        Ok(serde_json::from_slice(&out).expect("a list is written as JSON"))
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
