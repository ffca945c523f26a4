//! graph-node's `where` filters compiled to SQL over an entity's row: `field`, `field_not`,
//! `_gt`/`_gte`/`_lt`/`_lte`, `_in`/`_not_in`, `_contains`(`_nocase`), `_starts_with`,
//! `_ends_with` and their negations, list `_contains`, `field_` for a nested filter on a
//! referenced or derived entity, and `and` / `or`. A key no field and operator explain is refused
//! in graph-node's words (`Type \`Agent_filter\` has no field \`…\``). Here the filter is
//! walked; [`operators`] writes each clause's SQL, [`narrowing`] decides which clauses find rows
//! by an index and which only test the rows found, [`pieces`] which piece of a searched text a
//! trigram index is asked for.

use super::catalogue::{Catalogue, Entity, Field, Scalar, Shape};
use super::refusal::Refusal;
use super::sql::Sql;
use async_graphql::Value as ConstValue;
use narrowing::modes_of;
use operators::{by_id_parts, list_clause, scalar_clause};

/// Deepest nesting of `and`, `or` and nested entity filters.
const MAX_NESTING: usize = 8;

/// The operators, longest suffix first so `_not_contains_nocase` is not read as `_nocase`.
const OPERATORS: &[&str] = &[
    "_not_contains_nocase",
    "_not_starts_with_nocase",
    "_not_ends_with_nocase",
    "_starts_with_nocase",
    "_ends_with_nocase",
    "_contains_nocase",
    "_not_starts_with",
    "_not_ends_with",
    "_not_contains",
    "_starts_with",
    "_ends_with",
    "_contains",
    "_not_in",
    "_gte",
    "_lte",
    "_not",
    "_gt",
    "_lt",
    "_in",
    "_",
];

/// How a condition is best written: to find rows by an index (`Find`: nested filters as
/// `IN (SELECT …)`, list members as the list of rows holding them), or to test rows another
/// condition of the same filter already finds (`Test`: correlated lookups of the row at hand).
/// SQLite runs an `IN` list in full wherever it stands, so only conditions that narrow the rows
/// down are written to find them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Find,
    Test,
}

tokio::task_local! {
    /// Most items a list in a filter may hold (`[api.reads] max_list_argument`), set by the
    /// endpoint around planning ([`with_list_cap`]) so the planner's signature stays its own.
    static LIST_CAP: usize;
}

/// Runs `plan` (which compiles filters) with lists in filters capped at `cap` items.
pub(crate) fn with_list_cap<R>(cap: usize, plan: impl FnOnce() -> R) -> R {
    LIST_CAP.sync_scope(cap, plan)
}

/// The cap in force: the endpoint's, else the configured default.
fn list_cap() -> usize {
    LIST_CAP
        .try_with(|cap| *cap)
        .unwrap_or_else(|_| agentindex_indexer::config::ReadsConfig::default().max_list_argument)
}

/// The SQL condition `filter` (a `{Entity}_filter` object) sets on rows of `entity`, an entity
/// of `catalogue` (whose database the SQL is written for).
pub(crate) fn condition(
    catalogue: &Catalogue,
    entity: &Entity,
    filter: &ConstValue,
) -> Result<Sql, Refusal> {
    compile(catalogue, entity, filter, 0, Mode::Find)
}

/// Whether a clause of `filter` (a `{Entity}_filter` object) finds rows of `entity` by an index,
/// narrowing them down, rather than testing every row.
pub(crate) fn narrows(catalogue: &Catalogue, entity: &Entity, filter: &ConstValue) -> bool {
    let ConstValue::Object(fields) = filter else {
        return false;
    };
    let clauses: Vec<(&str, &ConstValue)> = fields.iter().map(|(k, v)| (k.as_str(), v)).collect();
    narrowing::narrows(catalogue, entity, &clauses)
}

fn compile(
    catalogue: &Catalogue,
    entity: &Entity,
    filter: &ConstValue,
    depth: usize,
    mode: Mode,
) -> Result<Sql, Refusal> {
    if depth > MAX_NESTING {
        return Err(Refusal::FilterTooDeep { max: MAX_NESTING });
    }
    let fields = match filter {
        ConstValue::Null => return Ok(Sql::new("true")),
        ConstValue::Object(fields) => fields,
        other => {
            return Err(Refusal::NotAFilter {
                entity: entity.name,
                found: other.to_string(),
            });
        }
    };
    let clauses: Vec<(&str, &ConstValue)> = fields.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let modes = modes_of(catalogue, entity, &clauses, mode);
    let mut out = Sql::new("(true");
    for ((key, value), mode) in clauses.into_iter().zip(modes) {
        out.push(" AND ");
        out.append(clause(catalogue, entity, key, value, depth, mode)?);
    }
    out.push(")");
    Ok(out)
}

fn clause(
    catalogue: &Catalogue,
    entity: &Entity,
    key: &str,
    value: &ConstValue,
    depth: usize,
    mode: Mode,
) -> Result<Sql, Refusal> {
    // Every item of an `_in`, `_contains` or `or` list widens the SQL and its plan.
    if let ConstValue::List(items) = value
        && items.len() > list_cap()
    {
        return Err(Refusal::ListTooLong {
            key: key.to_string(),
            entity: entity.name,
            items: items.len(),
            max: list_cap(),
        });
    }
    if key == "and" || key == "or" {
        let items = match value {
            ConstValue::List(items) => items.as_slice(),
            ConstValue::Null => return Ok(Sql::new("true")),
            other => std::slice::from_ref(other),
        };
        // An `or` of one item is that item, written as an `and` so a database that turns
        // `IN (SELECT …)` conjuncts into joins (PostgreSQL) can (the agent0 SDK wraps its skill
        // filter so).
        let key = if key == "or" && items.len() == 1 {
            "and"
        } else {
            key
        };
        // The items of an `and` are clauses of one filter; those of an `or` each stand alone.
        let modes = if key == "and" {
            let clauses: Vec<(&str, &ConstValue)> =
                items.iter().map(|item| ("and", item)).collect();
            modes_of(catalogue, entity, &clauses, mode)
        } else {
            vec![mode; items.len()]
        };
        let joiner = if key == "and" { " AND " } else { " OR " };
        let mut out = Sql::new(if key == "and" { "(true" } else { "(false" });
        for (item, mode) in items.iter().zip(modes) {
            out.push(joiner);
            out.append(compile(catalogue, entity, item, depth + 1, mode)?);
        }
        out.push(")");
        return Ok(out);
    }
    let no_field = || Refusal::NoFilterField {
        entity: entity.name,
        key: key.to_string(),
    };
    let (field, operator) = split(entity, key).ok_or_else(no_field)?;
    if let Some(sql) = by_id_parts(field, operator, value) {
        return sql;
    }
    let dialect = catalogue.dialect;
    match field.shape {
        Shape::Scalar(scalar) => {
            scalar_clause(dialect, field, scalar, operator, value).ok_or_else(no_field)?
        }
        Shape::List(scalar) => {
            list_clause(dialect, field, scalar, operator, value, mode).ok_or_else(no_field)?
        }
        Shape::Ref {
            entity: target,
            keys,
        } => {
            let target = catalogue.entity(target).expect("refs name entities");
            if operator == "_" {
                return match (mode, field.correlated) {
                    (Mode::Test, Some(from)) => {
                        let mut out = Sql::new(format!("EXISTS (SELECT 1 {from} AND "));
                        out.append(compile(catalogue, target, value, depth + 1, Mode::Test)?);
                        out.push(")");
                        Ok(out)
                    }
                    _ => nested(catalogue, keys, target, target.keys, value, depth),
                };
            }
            if matches!(value, ConstValue::Null) && matches!(operator, "" | "_not") {
                let negate = if operator.is_empty() { "" } else { " NOT" };
                return Ok(Sql::new(format!(
                    "({} IS{negate} NULL)",
                    field.compare_sql()
                )));
            }
            scalar_clause(dialect, field, Scalar::Id, operator, value).ok_or_else(no_field)?
        }
        Shape::Derived {
            entity: target, by, ..
        } => {
            if operator != "_" {
                return Err(no_field());
            }
            let target = catalogue
                .entity(target)
                .expect("derived lists name entities");
            nested(catalogue, entity.keys, target, by, value, depth)
        }
    }
}

/// `outer` (expressions over this row) among `inner` of the `target` rows `filter` keeps.
fn nested(
    catalogue: &Catalogue,
    outer: &[&str],
    target: &Entity,
    inner: &[&str],
    filter: &ConstValue,
    depth: usize,
) -> Result<Sql, Refusal> {
    let mut out = Sql::new(format!(
        "(({}) IN (SELECT {} {} AND ",
        outer.join(", "),
        inner.join(", "),
        target.from
    ));
    out.append(compile(catalogue, target, filter, depth + 1, Mode::Find)?);
    out.push("))");
    Ok(out)
}

/// The field and operator a filter key names.
fn split<'k>(entity: &Entity, key: &'k str) -> Option<(&'static Field, &'k str)> {
    if let Some(field) = entity.field(key)
        && !matches!(field.shape, Shape::Derived { .. })
    {
        return Some((field, ""));
    }
    OPERATORS.iter().find_map(|op| {
        let name = key.strip_suffix(op)?;
        entity.field(name).map(|field| (field, &key[name.len()..]))
    })
}

mod narrowing;
mod operators;
mod pieces;

pub(crate) use pieces::with_common_words;

#[cfg(test)]
mod tests;
