//! The statements a plan runs, written for the database at hand: a list's page (chosen by its
//! keys first, then read), one entity by id, the entities rows refer to, and a page per parent
//! of a derived list. Each returns one column, a JSON array per row (as text): its parent's
//! place among those read (NULL at the root), its own keys, then a value per column the
//! selection reads; a reference read through `Field::correlated` is one value, the referenced
//! row's own array (its id first). `execute` runs them and assembles the rows.

use super::catalogue::{self, Entity, Field, Paging, Shape};
use super::plan::{Item, ListQuery, What};
use super::refusal::Refusal;
use super::sql::{Bind, Sql};
use crate::read::pages::union_of_pages;
use agentindex_indexer::store::Dialect;
use async_graphql::{Name, Value as ConstValue};
use serde_json::Value as Json;

/// The page `query` asks for of a root list, its keys chosen first, by the page's conditions
/// alone, and only their rows read: SQLite reads a statement's columns for every row it sorts,
/// and a broad search sorts every row to return a thousand. A page in an order an index holds
/// (`Field::walk`) whose filter narrows no rows down by an index chooses its keys walking that
/// index, and stops after `first + skip` rows the filter keeps. `chain` limits it to one chain.
pub(crate) fn list(dialect: Dialect, query: &ListQuery, chain: Option<u64>) -> Sql {
    let entity = query.entity;
    let keys = entity.keys.join(", ");
    let order = order_by(&order_terms(entity, query.order), query.descending);
    let columns = Columns::of(dialect, &query.items);
    let walk = query.order.walk.filter(|_| !query.narrowed);
    let (from, page_order) = match walk {
        Some(walk) => (
            walk.from,
            order_by(&[walk.by, entity.id().compare_sql()], query.descending),
        ),
        None => (entity.from, order.clone()),
    };
    let mut page = Sql::new(format!("SELECT {keys} {from}"));
    chain_condition(entity, chain, walk.is_some(), &mut page);
    page.push(" AND ").append(query.filter.clone());
    page.push(&page_order);
    page.push(" LIMIT ")
        .bind(Bind::Int(query.first))
        .push(" OFFSET ")
        .bind(Bind::Int(query.skip));
    let (among, close) = among_page(dialect, entity.keys);
    let mut sql = Sql::new(format!(
        "SELECT {} {} AND {among}",
        row(dialect, "NULL", entity, &columns),
        entity.from
    ));
    name_chain(chain, &mut sql);
    sql.append(page).push(close).push(&order);
    // Last, for they are read in the rows, the filter and the orderings alike.
    fill_placeholders(query, &mut sql);
    sql
}

/// Puts an aggregation's interval and `current` where its SQL reads them (both are numbers
/// the planner wrote, never a client's text).
fn fill_placeholders(query: &ListQuery, sql: &mut Sql) {
    for (placeholder, value) in &query.placeholders {
        sql.text = sql.text.replace(placeholder, value);
    }
}

/// The test that a row's `keys` are among those of a page, as the text before and after the
/// page's statement: `(keys) IN (…)`, or on PostgreSQL for a single key `key = ANY(ARRAY(…))`,
/// which reads the page's rows through the key's index where `IN` is planned as reading every
/// row of the entity and keeping those in the page.
fn among_page(dialect: Dialect, keys: &[&str]) -> (String, &'static str) {
    match (dialect, keys) {
        (Dialect::Postgres, [key]) => (format!("{key} = ANY(ARRAY("), "))"),
        _ => (format!("({}) IN (", keys.join(", ")), ")"),
    }
}

/// The entity with `id`, if there is one (on `chain`, when given).
pub(crate) fn single(
    dialect: Dialect,
    entity: &Entity,
    id: &str,
    items: &[Item],
    chain: Option<u64>,
) -> Result<Sql, Refusal> {
    let columns = Columns::of(dialect, items);
    let mut sql = Sql::new(format!(
        "SELECT {} {}",
        row(dialect, "NULL", entity, &columns),
        entity.from
    ));
    chain_condition(entity, chain, false, &mut sql);
    let mut by_id = async_graphql::indexmap::IndexMap::new();
    by_id.insert(Name::new("id"), ConstValue::String(id.to_string()));
    let condition =
        super::filter::condition(catalogue::of(dialect), entity, &ConstValue::Object(by_id))?;
    sql.push(" AND ").append(condition).push(" LIMIT 1");
    Ok(sql)
}

/// The rows of `target` whose keys are among `keys` (JSON arrays of key values, as the rows
/// referring to them gave them).
pub(crate) fn referenced(dialect: Dialect, target: &Entity, items: &[Item], keys: &[&Json]) -> Sql {
    let columns = Columns::of(dialect, items);
    let mut sql = Sql::new(format!(
        "SELECT {} {} AND ",
        row(dialect, "NULL", target, &columns),
        target.from
    ));
    sql.append(among(dialect, target.keys, keys));
    sql
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
pub(crate) fn pages(
    dialect: Dialect,
    query: &ListQuery,
    paging: &Paging,
    parents: &[(String, Vec<Bind>)],
    room: i64,
) -> Sql {
    let target = query.entity;
    let rest = target
        .from
        .strip_prefix(&format!("FROM {} ", paging.table))
        .unwrap_or_else(|| panic!("{} is read from {} first", target.name, paging.table));
    let from = format!(
        "FROM {}{} {rest}",
        paging.table,
        dialect.index_hint(paging.index_for(query.order))
    );
    let columns = Columns::of(dialect, &query.items);
    let terms = order_terms(target, query.order);
    let direction = if query.descending { "DESC" } else { "ASC" };
    let carried: String = terms
        .iter()
        .enumerate()
        .map(|(n, term)| format!(", {term} AS o{n}"))
        .collect();
    let mut sql = Sql::new(format!("SELECT {} FROM (", dialect.json_as_text("row")));
    union_of_pages(&mut sql, parents, |sql, place, (_, values)| {
        sql.push(&format!(
            "SELECT {} AS row{carried} {from}",
            dialect.json_array(&format!(
                "{place}, {}{}",
                dialect.json_array(&target.keys.join(", ")),
                columns.sql
            ))
        ));
        for (link, value) in paging.links.iter().zip(values) {
            sql.push(&format!(" AND {} = ", link.child))
                .bind(value.clone());
        }
        sql.push(" AND ").append(query.filter.clone());
        sql.push(&order_by(&terms, query.descending));
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

/// The one column of a statement's rows, as text: the array of `parent`, the keys of `entity`
/// and `columns`.
fn row(dialect: Dialect, parent: &str, entity: &Entity, columns: &Columns) -> String {
    let keys = dialect.json_array(&entity.keys.join(", "));
    dialect.json_as_text(&dialect.json_array(&format!("{parent}, {keys}{}", columns.sql)))
}

/// Puts the endpoint's chain (or NULL, for every chain) where an entity's SQL reads `$CHAIN`.
fn name_chain(chain: Option<u64>, sql: &mut Sql) {
    let chain = chain.map_or("NULL".to_string(), |c| c.to_string());
    sql.text = sql.text.replace("$CHAIN", &chain);
}

/// Limits rows to the endpoint's chain (and names it where an entity's SQL reads `$CHAIN`).
/// The comparison is kept from the planner's choice of index (`+`): the chain is rarely what
/// narrows a query down. A page `walked` down an index in its order compares it plainly: its
/// plan is that index whatever the comparison, and PostgreSQL reckons how far the walk goes
/// from the comparison's statistics, which `+` hides (taking the chain for one row in 200, it
/// would sort every agent rather than walk).
fn chain_condition(entity: &Entity, chain: Option<u64>, walked: bool, sql: &mut Sql) {
    name_chain(chain, sql);
    if let (Some(chain), false) = (chain, entity.chain.is_empty()) {
        let kept = if walked { "" } else { "+" };
        sql.push(&format!(" AND {kept}{} = ", entity.chain))
            .bind(Bind::Int(chain as i64));
    }
}

/// `ORDER BY` each of `terms` (an ordering's, as [`order_terms`] lists them) the same way.
fn order_by(terms: &[&str], descending: bool) -> String {
    let direction = if descending { "DESC" } else { "ASC" };
    let terms: Vec<String> = terms
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
    let list = Json::Array(keys.iter().map(|k| (*k).clone()).collect()).to_string();
    match dialect {
        Dialect::Postgres => {
            let mut sql = Sql::new(format!(
                "jsonb_build_array({}) IN (SELECT j.value FROM jsonb_array_elements(CAST(",
                columns.join(", ")
            ));
            sql.bind(Bind::Text(list)).push(" AS jsonb)) j)");
            sql
        }
        Dialect::Sqlite => {
            let picks: Vec<String> = (0..columns.len())
                .map(|i| format!("json_extract(j.value, '$[{i}]')"))
                .collect();
            let mut sql = Sql::new(format!(
                "({}) IN (SELECT {} FROM json_each(",
                columns.join(", "),
                picks.join(", ")
            ));
            sql.bind(Bind::Text(list)).push(") j)");
            sql
        }
    }
}

/// The columns a selection reads, and where each item's value sits in a row.
pub(crate) struct Columns {
    /// `, expr, expr…`, to follow the keys in the row's array.
    sql: String,
    /// Per item, the index of its first value in a row.
    pub(crate) slots: Vec<usize>,
}

impl Columns {
    /// The columns of `items`, each after the row's first two values (its parent's place and
    /// its own keys).
    pub(crate) fn of(dialect: Dialect, items: &[Item]) -> Self {
        Self::written(dialect, items, None)
    }

    /// The columns of `items` of a row of `target` read inside its parent's row
    /// ([`Columns::of`] writes it there): the row's first value is the target's id, which an
    /// `id` item reads rather than a column of its own.
    pub(crate) fn folded(dialect: Dialect, target: &Entity, items: &[Item]) -> Self {
        Self::written(dialect, items, Some(target.id()))
    }

    fn written(dialect: Dialect, items: &[Item], id_first: Option<&Field>) -> Self {
        let mut sql = String::new();
        let mut slots = Vec::with_capacity(items.len());
        // A row starts with its parent's place (or its id) and its own keys.
        let mut next = 2;
        for item in items {
            match &item.what {
                What::Column(field) if id_first.is_some_and(|id| std::ptr::eq(*field, id)) => {
                    slots.push(0);
                }
                What::Column(field) => {
                    slots.push(next);
                    match field.shape {
                        Shape::List(_) => sql.push_str(&format!(", {}", dialect.json(field.sql))),
                        _ => sql.push_str(&format!(", {}", field.sql)),
                    }
                    next += 1;
                }
                What::Ref(field, sub) => {
                    slots.push(next);
                    let Shape::Ref { entity, keys } = field.shape else {
                        unreachable!("a ref item holds a ref field")
                    };
                    match field.correlated {
                        Some(from) => {
                            let target = catalogue::of(dialect)
                                .entity(entity)
                                .expect("refs name entities");
                            sql.push_str(&format!(", {}", folded_row(dialect, target, from, sub)));
                            next += 1;
                        }
                        None => {
                            sql.push_str(&format!(
                                ", {}, {}",
                                field.sql,
                                dialect.json_array(&keys.join(", "))
                            ));
                            next += 2;
                        }
                    }
                }
                What::Derived(field, _) => {
                    slots.push(next);
                    let Shape::Derived { paging, .. } = field.shape else {
                        unreachable!("a derived item holds a derived field")
                    };
                    let parent: Vec<&str> = paging.links.iter().map(|link| link.parent).collect();
                    sql.push_str(&format!(", {}", dialect.json_array(&parent.join(", "))));
                    next += 1;
                }
                What::Typename(_) => slots.push(next),
            }
        }
        Self { sql, slots }
    }
}

/// The row of `target` a reference reads, read inside its parent's row through `from` (the
/// reference's `Field::correlated`): a JSON array of the target's id, its keys and the columns
/// of `items` ([`Columns::folded`]), or NULL when there is none. The reference is null when
/// the row is, or its id: its own SQL is that id read the same way, so it is not read again.
fn folded_row(dialect: Dialect, target: &Entity, from: &str, items: &[Item]) -> String {
    let columns = Columns::folded(dialect, target, items);
    let keys = dialect.json_array(&target.keys.join(", "));
    let row = dialect.json_array(&format!("{}, {keys}{}", target.id().sql, columns.sql));
    format!("(SELECT {row} {from} LIMIT 1)")
}

#[cfg(test)]
#[path = "statements_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "walk_tests.rs"]
mod walk_tests;
