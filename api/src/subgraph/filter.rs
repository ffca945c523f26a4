//! graph-node's `where` filters compiled to SQL over an entity's row: `field`, `field_not`,
//! `_gt`/`_gte`/`_lt`/`_lte`, `_in`/`_not_in`, `_contains`(`_nocase`), `_starts_with`,
//! `_ends_with` and their negations, list `_contains`, `field_` for a nested filter on a
//! referenced or derived entity, and `and` / `or`. A key no field and operator explain is refused
//! in graph-node's words (`Type \`Agent_filter\` has no field \`…\``).

use super::catalogue::{Entity, Field, Scalar, Shape};
use super::sql::{Bind, Sql};
use super::values::{bind, bind_json};
use async_graphql::Value as ConstValue;

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

/// The SQL condition `filter` (a `{Entity}_filter` object) sets on rows of `entity`.
pub(crate) fn condition(entity: &Entity, filter: &ConstValue) -> Result<Sql, String> {
    compile(entity, filter, 0, Mode::Find)
}

fn compile(entity: &Entity, filter: &ConstValue, depth: usize, mode: Mode) -> Result<Sql, String> {
    if depth > MAX_NESTING {
        return Err(format!("the filter nests deeper than {MAX_NESTING} levels"));
    }
    let fields = match filter {
        ConstValue::Null => return Ok(Sql::new("1")),
        ConstValue::Object(fields) => fields,
        other => {
            return Err(format!(
                "Expected input object of type `{}_filter`, found `{other}`",
                entity.name
            ));
        }
    };
    let clauses: Vec<(&str, &ConstValue)> = fields.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let modes = modes_of(entity, &clauses, mode);
    let mut out = Sql::new("(1");
    for ((key, value), mode) in clauses.into_iter().zip(modes) {
        out.push(" AND ");
        out.append(clause(entity, key, value, depth, mode)?);
    }
    out.push(")");
    Ok(out)
}

/// The mode of each of `clauses` (joined by AND): the clauses that narrow rows down best find
/// them, the others only test what those find.
fn modes_of(entity: &Entity, clauses: &[(&str, &ConstValue)], mode: Mode) -> Vec<Mode> {
    let strengths: Vec<u8> = clauses
        .iter()
        .map(|(key, value)| strength(entity, key, value))
        .collect();
    let best = strengths.iter().copied().max().unwrap_or(0);
    strengths
        .into_iter()
        .map(|strength| match mode {
            Mode::Find if best > 0 && strength < best => Mode::Test,
            other => other,
        })
        .collect()
}

/// How well clause `key: value` narrows rows down by an index: 2 for an id, an indexed field or a
/// text search of three characters or more; 1 for a list member (every row holding a value,
/// often many); 0 for a clause that reads every row. A nested filter counts its best clause, an
/// `and` its best item, an `or` its weakest.
fn strength(entity: &Entity, key: &str, value: &ConstValue) -> u8 {
    let items = |value: &ConstValue| -> Vec<ConstValue> {
        match value {
            ConstValue::List(items) => items.clone(),
            other => vec![other.clone()],
        }
    };
    let best = |entity: &Entity, value: &ConstValue| match value {
        ConstValue::Object(fields) => fields
            .iter()
            .map(|(k, v)| strength(entity, k.as_str(), v))
            .max()
            .unwrap_or(0),
        _ => 0,
    };
    match key {
        "and" => items(value)
            .iter()
            .map(|item| best(entity, item))
            .max()
            .unwrap_or(0),
        "or" => items(value)
            .iter()
            .map(|item| best(entity, item))
            .min()
            .unwrap_or(0),
        _ => {
            let Some((field, operator)) = split(entity, key) else {
                return 0;
            };
            if matches!(value, ConstValue::Null) {
                return 0;
            }
            match (operator, field.shape) {
                ("" | "_in", _) if !field.id_parts.is_empty() || field.indexed => 2,
                ("_contains" | "_contains_nocase", Shape::Scalar(_))
                    if field.search.is_some()
                        && matches!(value, ConstValue::String(s) if s.chars().count() >= 3) =>
                {
                    2
                }
                ("_contains", Shape::List(_)) if field.member.is_some() => 1,
                ("_", Shape::Ref { entity: target, .. }) => best(
                    super::catalogue::entity(target).expect("refs name entities"),
                    value,
                ),
                _ => 0,
            }
        }
    }
}

fn clause(
    entity: &Entity,
    key: &str,
    value: &ConstValue,
    depth: usize,
    mode: Mode,
) -> Result<Sql, String> {
    if key == "and" || key == "or" {
        let items = match value {
            ConstValue::List(items) => items.as_slice(),
            ConstValue::Null => return Ok(Sql::new("1")),
            other => std::slice::from_ref(other),
        };
        // The items of an `and` are clauses of one filter; those of an `or` each stand alone.
        let modes = if key == "and" {
            let clauses: Vec<(&str, &ConstValue)> =
                items.iter().map(|item| ("and", item)).collect();
            modes_of(entity, &clauses, mode)
        } else {
            vec![mode; items.len()]
        };
        let joiner = if key == "and" { " AND " } else { " OR " };
        let mut out = Sql::new(if key == "and" { "(1" } else { "(0" });
        for (item, mode) in items.iter().zip(modes) {
            out.push(joiner);
            out.append(compile(entity, item, depth + 1, mode)?);
        }
        out.push(")");
        return Ok(out);
    }
    let no_field = || format!("Type `{}_filter` has no field `{key}`", entity.name);
    let (field, operator) = split(entity, key).ok_or_else(no_field)?;
    if let Some(sql) = by_id_parts(field, operator, value) {
        return sql;
    }
    match field.shape {
        Shape::Scalar(scalar) => {
            scalar_clause(field, scalar, operator, value).ok_or_else(no_field)?
        }
        Shape::List(scalar) => {
            list_clause(field, scalar, operator, value, mode).ok_or_else(no_field)?
        }
        Shape::Ref {
            entity: target,
            keys,
        } => {
            let target = super::catalogue::entity(target).expect("refs name entities");
            if operator == "_" {
                return match (mode, field.correlated) {
                    (Mode::Test, Some(from)) => {
                        let mut out = Sql::new(format!("EXISTS (SELECT 1 {from} AND "));
                        out.append(compile(target, value, depth + 1, Mode::Test)?);
                        out.push(")");
                        Ok(out)
                    }
                    _ => nested(keys, target, target.keys, value, depth),
                };
            }
            if matches!(value, ConstValue::Null) && matches!(operator, "" | "_not") {
                let negate = if operator.is_empty() { "" } else { " NOT" };
                return Ok(Sql::new(format!(
                    "({} IS{negate} NULL)",
                    field.compare_sql()
                )));
            }
            scalar_clause(field, Scalar::Id, operator, value).ok_or_else(no_field)?
        }
        Shape::Derived { entity: target, by } => {
            if operator != "_" {
                return Err(no_field());
            }
            let target = super::catalogue::entity(target).expect("derived lists name entities");
            nested(entity.keys, target, by, value, depth)
        }
    }
}

/// An equality or `_in` test on an id made of parts, compared part by part on the columns that
/// hold them so an index finds the rows; `None` when the field has no parts or the test is
/// another.
fn by_id_parts(field: &Field, operator: &str, value: &ConstValue) -> Option<Result<Sql, String>> {
    if field.id_parts.is_empty() || matches!(value, ConstValue::Null) {
        return None;
    }
    let (negate, ids) = match (operator, value) {
        ("", ConstValue::String(id)) => (false, vec![id.as_str()]),
        ("_not", ConstValue::String(id)) => (true, vec![id.as_str()]),
        ("_in" | "_not_in", ConstValue::List(items)) => {
            let mut ids = Vec::with_capacity(items.len());
            for item in items {
                match item {
                    ConstValue::String(id) => ids.push(id.as_str()),
                    other => {
                        return Some(Err(format!(
                            "Failed to coerce value `{other}` to type `ID`"
                        )));
                    }
                }
            }
            (operator == "_not_in", ids)
        }
        _ => return None,
    };
    let mut out = Sql::new(if negate { "(NOT (0" } else { "((0" });
    for id in ids {
        let pieces: Vec<&str> = id.split(':').collect();
        if pieces.len() != field.id_parts.len() {
            continue; // no row has an id of another shape
        }
        let mut binds = Vec::with_capacity(pieces.len());
        for (piece, part) in pieces.iter().zip(field.id_parts) {
            if part.integer {
                match piece.parse::<i64>() {
                    Ok(n) => binds.push(Bind::Int(n)),
                    Err(_) => break,
                }
            } else {
                binds.push(Bind::Text(piece.to_string()));
            }
        }
        if binds.len() != pieces.len() {
            continue;
        }
        out.push(" OR (1");
        for (part, bind) in field.id_parts.iter().zip(binds) {
            out.push(&format!(" AND {} = ", part.sql)).bind(bind);
        }
        out.push(")");
    }
    out.push("))");
    Some(Ok(out))
}

/// `outer` (expressions over this row) among `inner` of the `target` rows `filter` keeps.
fn nested(
    outer: &[&str],
    target: &Entity,
    inner: &[&str],
    filter: &ConstValue,
    depth: usize,
) -> Result<Sql, String> {
    let mut out = Sql::new(format!(
        "(({}) IN (SELECT {} {} AND ",
        outer.join(", "),
        inner.join(", "),
        target.from
    ));
    out.append(compile(target, filter, depth + 1, Mode::Find)?);
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

fn scalar_clause(
    field: &Field,
    scalar: Scalar,
    operator: &str,
    value: &ConstValue,
) -> Option<Result<Sql, String>> {
    let expr = field.compare_sql();
    let text_like = matches!(scalar, Scalar::Id | Scalar::String | Scalar::Bytes);
    let ordered = !matches!(scalar, Scalar::Boolean);
    let mut out = Sql::new("(");
    let result = match operator {
        "" | "_not" if matches!(value, ConstValue::Null) => {
            let negate = if operator.is_empty() { "" } else { " NOT" };
            out.push(&format!("{expr} IS{negate} NULL"));
            Ok(())
        }
        "" | "_not" => bind(scalar, value).map(|b| {
            let op = if operator.is_empty() { "=" } else { "!=" };
            out.push(&format!("{expr} {op} ")).bind(b);
        }),
        "_gt" | "_gte" | "_lt" | "_lte" if ordered => bind(scalar, value).map(|b| {
            let op = match operator {
                "_gt" => ">",
                "_gte" => ">=",
                "_lt" => "<",
                _ => "<=",
            };
            out.push(&format!("{expr} {op} ")).bind(b);
        }),
        "_in" | "_not_in" => values(scalar, value).map(|list| {
            let negate = if operator == "_in" { "" } else { "NOT " };
            out.push(&format!("{expr} {negate}IN (SELECT value FROM json_each("))
                .bind(list)
                .push("))");
        }),
        _ if text_like => {
            let test = text_test(operator)?;
            let needle = match bind(
                if scalar == Scalar::Bytes {
                    Scalar::Bytes
                } else {
                    Scalar::String
                },
                value,
            ) {
                Ok(Bind::Text(text)) => {
                    if scalar == Scalar::Bytes {
                        text.trim_start_matches("0x").to_string()
                    } else {
                        text
                    }
                }
                Ok(_) => unreachable!("text binds are text"),
                Err(e) => return Some(Err(e)),
            };
            // A trigram index finds the candidates for a piece of three characters or more.
            if let (Some(search), Position::Anywhere, false) =
                (field.search, &test.position, test.negate)
                && needle.chars().count() >= 3
            {
                let phrase = format!("\"{}\"", needle.replace('"', "\"\""));
                let (before, after) = search.split_once('?').expect("a search binds its phrase");
                out.push(before)
                    .bind(Bind::Text(phrase))
                    .push(after)
                    .push(" AND ");
            }
            out.append(test.sql(expr, needle));
            Ok(())
        }
        _ => return None,
    };
    Some(result.map(|()| {
        out.push(")");
        out
    }))
}

/// The JSON array of `value`'s items, each bound as `scalar`.
fn values(scalar: Scalar, value: &ConstValue) -> Result<Bind, String> {
    let ConstValue::List(items) = value else {
        return Err(format!(
            "Expected a list of `{}`, found `{value}`",
            scalar.type_name()
        ));
    };
    let bound = items
        .iter()
        .map(|item| bind(scalar, item).map(|b| bind_json(&b)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Bind::Text(serde_json::Value::Array(bound).to_string()))
}

/// A substring test on text.
struct TextTest {
    position: Position,
    nocase: bool,
    negate: bool,
}

enum Position {
    Anywhere,
    Start,
    End,
}

fn text_test(operator: &str) -> Option<TextTest> {
    let (negate, rest) = match operator.strip_prefix("_not") {
        Some(rest) if !rest.is_empty() => (true, rest),
        _ => (false, operator),
    };
    let (rest, nocase) = match rest.strip_suffix("_nocase") {
        Some(rest) => (rest, true),
        None => (rest, false),
    };
    let position = match rest {
        "_contains" => Position::Anywhere,
        "_starts_with" => Position::Start,
        "_ends_with" => Position::End,
        _ => return None,
    };
    Some(TextTest {
        position,
        nocase,
        negate,
    })
}

impl TextTest {
    fn sql(&self, expr: &str, needle: String) -> Sql {
        let (hay, needle) = if self.nocase {
            (format!("lower({expr})"), needle.to_lowercase())
        } else {
            (expr.to_string(), needle)
        };
        let length = needle.chars().count() as i64;
        let mut out = Sql::new(if self.negate {
            "NOT coalesce("
        } else {
            "coalesce("
        });
        match self.position {
            Position::Anywhere => {
                out.push(&format!("instr({hay}, "))
                    .bind(Bind::Text(needle))
                    .push(") > 0");
            }
            Position::Start => {
                out.push(&format!("substr({hay}, 1, "))
                    .bind(Bind::Int(length))
                    .push(") = ")
                    .bind(Bind::Text(needle));
            }
            Position::End => {
                out.push(&format!("({length} = 0 OR substr({hay}, -"))
                    .bind(Bind::Int(length.max(1)))
                    .push(") = ")
                    .bind(Bind::Text(needle))
                    .push(")");
            }
        }
        out.push(", 0)");
        out
    }
}

fn list_clause(
    field: &Field,
    scalar: Scalar,
    operator: &str,
    value: &ConstValue,
    mode: Mode,
) -> Option<Result<Sql, String>> {
    let expr = field.compare_sql();
    let (negate, rest) = match operator.strip_prefix("_not") {
        Some(rest) => (true, rest),
        None => (false, operator),
    };
    let nocase = rest.ends_with("_nocase");
    let rest = rest.trim_end_matches("_nocase");
    let member = match mode {
        Mode::Test => field.member_check.or(field.member),
        Mode::Find => field.member,
    };
    if let (Some(member), "_contains", false, ConstValue::List(items)) =
        (member, rest, nocase, value)
    {
        return Some(members(member, scalar, negate, items));
    }
    let mut out = Sql::new(if negate { "(NOT (" } else { "((" });
    let result = match (rest, value) {
        ("", ConstValue::Null) => {
            out.push(&format!("{expr} IS NULL"));
            Ok(())
        }
        ("", _) => values(scalar, value).map(|list| {
            out.push(&format!("json({expr}) = json("))
                .bind(list)
                .push(")");
        }),
        ("_contains", _) => values(scalar, value).map(|list| {
            let (item, wanted) = if nocase {
                ("lower(h.value)", "lower(w.value)")
            } else {
                ("h.value", "w.value")
            };
            out.push("NOT EXISTS (SELECT 1 FROM json_each(")
                .bind(list)
                .push(&format!(
                    ") w WHERE {wanted} NOT IN (SELECT {item} FROM json_each({expr}) h))"
                ));
        }),
        _ => return None,
    };
    Some(result.map(|()| {
        out.push("))");
        out
    }))
}

/// Every one of `items` in the list, each tested by the field's `member` SQL.
fn members(
    member: &str,
    scalar: Scalar,
    negate: bool,
    items: &[ConstValue],
) -> Result<Sql, String> {
    let mut out = Sql::new(if negate { "(NOT (1" } else { "((1" });
    for item in items {
        let value = bind(scalar, item)?;
        out.push(" AND (");
        let mut pieces = member.split('?');
        out.push(pieces.next().unwrap_or_default());
        for piece in pieces {
            out.bind(value.clone()).push(piece);
        }
        out.push(")");
    }
    out.push("))");
    Ok(out)
}

#[cfg(test)]
#[path = "filter_tests.rs"]
mod tests;
