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

/// The SQL condition `filter` (a `{Entity}_filter` object) sets on rows of `entity`.
pub(crate) fn condition(entity: &Entity, filter: &ConstValue) -> Result<Sql, String> {
    compile(entity, filter, 0)
}

fn compile(entity: &Entity, filter: &ConstValue, depth: usize) -> Result<Sql, String> {
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
    let mut out = Sql::new("(1");
    for (key, value) in fields {
        out.push(" AND ");
        out.append(clause(entity, key.as_str(), value, depth)?);
    }
    out.push(")");
    Ok(out)
}

fn clause(entity: &Entity, key: &str, value: &ConstValue, depth: usize) -> Result<Sql, String> {
    if key == "and" || key == "or" {
        let items = match value {
            ConstValue::List(items) => items.as_slice(),
            ConstValue::Null => return Ok(Sql::new("1")),
            other => std::slice::from_ref(other),
        };
        let joiner = if key == "and" { " AND " } else { " OR " };
        let mut out = Sql::new(if key == "and" { "(1" } else { "(0" });
        for item in items {
            out.push(joiner);
            out.append(compile(entity, item, depth + 1)?);
        }
        out.push(")");
        return Ok(out);
    }
    let no_field = || format!("Type `{}_filter` has no field `{key}`", entity.name);
    let (field, operator) = split(entity, key).ok_or_else(no_field)?;
    match field.shape {
        Shape::Scalar(scalar) => {
            scalar_clause(field, scalar, operator, value).ok_or_else(no_field)?
        }
        Shape::List(scalar) => list_clause(field, scalar, operator, value).ok_or_else(no_field)?,
        Shape::Ref {
            entity: target,
            keys,
        } => {
            let target = super::catalogue::entity(target).expect("refs name entities");
            if operator == "_" {
                return nested(keys, target, target.keys, value, depth);
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
    out.append(compile(target, filter, depth + 1)?);
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
) -> Option<Result<Sql, String>> {
    let expr = field.compare_sql();
    let (negate, rest) = match operator.strip_prefix("_not") {
        Some(rest) => (true, rest),
        None => (false, operator),
    };
    let nocase = rest.ends_with("_nocase");
    let rest = rest.trim_end_matches("_nocase");
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subgraph::catalogue::entity;

    fn filter(json: serde_json::Value) -> ConstValue {
        ConstValue::from_json(json).expect("a filter")
    }

    #[test]
    fn keys_split_into_field_and_operator() {
        let agent = entity("Agent").unwrap();
        assert_eq!(
            split(agent, "owner_in").map(|(f, o)| (f.name, o)),
            Some(("owner", "_in"))
        );
        assert_eq!(
            split(agent, "registrationFile_not").map(|(f, o)| (f.name, o)),
            Some(("registrationFile", "_not"))
        );
        assert_eq!(
            split(agent, "registrationFile_").map(|(f, o)| (f.name, o)),
            Some(("registrationFile", "_"))
        );
        assert_eq!(
            split(agent, "operators_contains").map(|(f, o)| (f.name, o)),
            Some(("operators", "_contains"))
        );
        assert!(split(agent, "nothing_in").is_none());
    }

    #[test]
    fn unknown_keys_are_refused_in_graph_node_words() {
        let agent = entity("Agent").unwrap();
        let error = condition(agent, &filter(serde_json::json!({ "colour": "red" }))).unwrap_err();
        assert_eq!(error, "Type `Agent_filter` has no field `colour`");
        let error = condition(
            agent,
            &filter(serde_json::json!({ "registrationFile_": { "hasWings": true } })),
        )
        .unwrap_err();
        assert_eq!(
            error,
            "Type `AgentRegistrationFile_filter` has no field `hasWings`"
        );
        // An operator a type does not have is an unknown field too.
        let error = condition(
            agent,
            &filter(serde_json::json!({ "owner_gt_nocase": "x" })),
        )
        .unwrap_err();
        assert_eq!(error, "Type `Agent_filter` has no field `owner_gt_nocase`");
    }

    #[test]
    fn values_bind_in_order() {
        let agent = entity("Agent").unwrap();
        let sql = condition(
            agent,
            &filter(serde_json::json!({
                "owner_in": ["0xAA", "0xbb"],
                "createdAt_gte": 5,
                "registrationFile_not": null,
            })),
        )
        .unwrap();
        // serde_json's maps keep keys sorted: createdAt_gte comes first.
        assert_eq!(
            sql.binds,
            vec![Bind::Int(5), Bind::Text(r#"["0xaa","0xbb"]"#.into())]
        );
        assert!(sql.text.contains("IS NOT NULL"));
    }
}
