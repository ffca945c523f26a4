//! The SQL of one filter clause by its operator: ids compared part by part, scalars (equality,
//! order, lists of values, substrings), and lists (equality, `_contains` by JSON or by the
//! field's member lookups).

use super::Mode;
use super::pieces::index_pattern;
use crate::subgraph::catalogue::{Field, Scalar};
use crate::subgraph::refusal::Refusal;
use crate::subgraph::sql::{Bind, Sql};
use crate::subgraph::values::{bind, bind_json};
use agentindex_indexer::store::Dialect;
use async_graphql::Value as ConstValue;

/// An equality or `_in` test on an id made of parts, compared part by part on the columns that
/// hold them so an index finds the rows; `None` when the field has no parts or the test is
/// another.
pub(super) fn by_id_parts(
    field: &Field,
    operator: &str,
    value: &ConstValue,
) -> Option<Result<Sql, Refusal>> {
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
                        return Some(Err(Refusal::Coerce {
                            value: other.to_string(),
                            to: Scalar::Id.type_name(),
                        }));
                    }
                }
            }
            (operator == "_not_in", ids)
        }
        _ => return None,
    };
    let mut out = Sql::new(if negate { "(NOT (false" } else { "((false" });
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
        out.push(" OR (true");
        for (part, bind) in field.id_parts.iter().zip(binds) {
            out.push(&format!(" AND {} = ", part.sql)).bind(bind);
        }
        out.push(")");
    }
    out.push("))");
    Some(Ok(out))
}

pub(super) fn scalar_clause(
    dialect: Dialect,
    field: &Field,
    scalar: Scalar,
    operator: &str,
    value: &ConstValue,
) -> Option<Result<Sql, Refusal>> {
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
            // Numbers and flags compare as integers on both databases.
            let member = match scalar {
                Scalar::Int | Scalar::Int8 | Scalar::Timestamp | Scalar::Boolean => {
                    "CAST(value AS BIGINT)"
                }
                _ => "value",
            };
            out.push_bound(
                &format!(
                    "{expr} {negate}IN (SELECT {member} FROM {})",
                    dialect.json_elements("?")
                ),
                [list],
            );
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
            // A trigram index finds the candidates for a piece of three characters or more (for
            // a name, its pieces without the words most names hold), each checked against the
            // whole.
            if let (Some(search), Position::Anywhere, false) =
                (field.search, &test.position, test.negate)
                && needle.chars().count() >= 3
            {
                let pattern = index_pattern(dialect, field.name, &needle);
                out.push_bound(search, [Bind::Text(pattern)]).push(" AND ");
            }
            out.append(test.sql(dialect, expr, needle));
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
fn values(scalar: Scalar, value: &ConstValue) -> Result<Bind, Refusal> {
    let ConstValue::List(items) = value else {
        return Err(Refusal::NotAList {
            of: scalar.type_name(),
            found: value.to_string(),
        });
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
    fn sql(&self, dialect: Dialect, expr: &str, needle: String) -> Sql {
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
                out.push_bound(
                    &format!("{} > 0", dialect.position(&hay, "?")),
                    [Bind::Text(needle)],
                );
            }
            // Lengths are bound as 64-bit integers, which PostgreSQL's substr does not take.
            Position::Start => {
                out.push(&format!("substr({hay}, 1, CAST("))
                    .bind(Bind::Int(length))
                    .push(" AS INTEGER)) = ")
                    .bind(Bind::Text(needle));
            }
            Position::End => {
                // The last `length` characters, counted from the start (PostgreSQL's substr
                // takes no negative start).
                out.push(&format!(
                    "({length} = 0 OR substr({hay}, length({hay}) + 1 - CAST("
                ))
                .bind(Bind::Int(length.max(1)))
                .push(" AS INTEGER)) = ")
                .bind(Bind::Text(needle))
                .push(")");
            }
        }
        out.push(", false)");
        out
    }
}

pub(super) fn list_clause(
    dialect: Dialect,
    field: &Field,
    scalar: Scalar,
    operator: &str,
    value: &ConstValue,
    mode: Mode,
) -> Option<Result<Sql, Refusal>> {
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
            out.push_bound(
                &format!("{} = {}", dialect.json(expr), dialect.json("?")),
                [list],
            );
        }),
        ("_contains", _) => values(scalar, value).map(|list| {
            let (item, wanted) = if nocase {
                ("lower(h.value)", "lower(w.value)")
            } else {
                ("h.value", "w.value")
            };
            out.push_bound(
                &format!(
                    "NOT EXISTS (SELECT 1 FROM {} w WHERE {wanted} NOT IN (SELECT {item} FROM {} h))",
                    dialect.json_elements("?"),
                    dialect.json_elements(expr)
                ),
                [list],
            );
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
) -> Result<Sql, Refusal> {
    let mut out = Sql::new(if negate { "(NOT (true" } else { "((true" });
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
