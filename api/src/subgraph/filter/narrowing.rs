//! Which clauses of a filter find rows by an index and which only test the rows found: each
//! clause's strength (ids, indexed fields and trigram text strongest, list members next), the
//! mode of each clause of an AND that follows from it, and whether a filter narrows rows down
//! at all.

use super::{Mode, split};
use crate::subgraph::catalogue::{Catalogue, Entity, Shape};
use async_graphql::Value as ConstValue;

/// The mode of each of `clauses` (joined by AND): the clauses that narrow rows down best find
/// them, the others only test what those find.
pub(super) fn modes_of(
    catalogue: &Catalogue,
    entity: &Entity,
    clauses: &[(&str, &ConstValue)],
    mode: Mode,
) -> Vec<Mode> {
    let strengths: Vec<u8> = clauses
        .iter()
        .map(|(key, value)| strength(catalogue, entity, key, value))
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

/// Whether any of `clauses` (joined by AND) narrows rows down by an index.
pub(super) fn narrows(
    catalogue: &Catalogue,
    entity: &Entity,
    clauses: &[(&str, &ConstValue)],
) -> bool {
    clauses
        .iter()
        .any(|(key, value)| strength(catalogue, entity, key, value) > 0)
}

/// How well clause `key: value` narrows rows down by an index: 2 for an id, an indexed field or a
/// text search of three characters or more; 1 for a list member (every row holding a value,
/// often many); 0 for a clause that reads every row. A nested filter counts its best clause, an
/// `and` its best item, an `or` its weakest.
fn strength(catalogue: &Catalogue, entity: &Entity, key: &str, value: &ConstValue) -> u8 {
    let items = |value: &ConstValue| -> Vec<ConstValue> {
        match value {
            ConstValue::List(items) => items.clone(),
            other => vec![other.clone()],
        }
    };
    let best = |entity: &Entity, value: &ConstValue| match value {
        ConstValue::Object(fields) => fields
            .iter()
            .map(|(k, v)| strength(catalogue, entity, k.as_str(), v))
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
                ("_", Shape::Ref { entity: target, .. }) => {
                    best(catalogue.entity(target).expect("refs name entities"), value)
                }
                _ => 0,
            }
        }
    }
}
