//! A GraphQL request read into what to fetch: the operation chosen, its variables substituted,
//! fragments inlined, and every field checked against the catalogue. What graph-node refuses is
//! refused here in its words: an unknown field is ``Type `Agent` has no field `x` ``, which is
//! what the agent0 SDKs look for before retrying with an older field name. The document is
//! measured against the query budget (`crate::budget`) before anything expands it, and the
//! expansion itself counts the fields it produces and stops at that budget.
//!
//! Here the operation is chosen and its root fields planned; [`reader`] reads the document
//! (fragments, arguments, `block`), [`selection`] checks each field against the catalogue,
//! [`types`] holds what a plan is made of, and [`error`] what a refusal carries.

mod error;
mod reader;
mod selection;
mod types;

pub(crate) use error::QueryError;
pub(crate) use types::{Item, ListQuery, MetaItem, Plan, Root, What};

use super::catalogue;
use crate::budget::QueryBudget;
use agentindex_indexer::store::Dialect;
use async_graphql::parser::Positioned;
use async_graphql::parser::types::{DocumentOperations, ExecutableDocument, OperationType};
use async_graphql::{Name, Variables};
use reader::{Reader, response_key};

/// Most fields a query's root may ask (aliases included), as `/graphql` bounds its aliases.
pub(crate) const MAX_ROOT_FIELDS: usize = 30;

/// Reads `text` (with `variables`, choosing `operation`) into a plan against the catalogue
/// written for `dialect` (its filters written for that database), refusing what is over
/// `budget` before expanding anything.
pub(crate) fn plan(
    dialect: Dialect,
    text: &str,
    operation: Option<&str>,
    variables: &Variables,
    budget: &QueryBudget,
) -> Result<Plan, QueryError> {
    budget.check_text(text)?;
    budget.check_variables(variables)?;
    let document = async_graphql::parser::parse_query(text)
        .map_err(|e| QueryError::new(format!("Syntax error: {e}"), e.positions().next()))?;
    budget.check_document(&document)?;
    let operation_def = choose(&document, operation)?;
    if operation_def.node.ty != OperationType::Query {
        return Err(QueryError::new(
            "Only queries are supported",
            Some(operation_def.pos),
        ));
    }
    // Variables the request leaves out take their declared defaults.
    let mut values = variables.clone();
    for definition in &operation_def.node.variable_definitions {
        let name = definition.node.name.node.clone();
        if !values.contains_key(&name)
            && let Some(default) = &definition.node.default_value
        {
            values.insert(name, default.node.clone());
        }
    }
    let catalogue = catalogue::of(dialect);
    let mut reader = Reader::new(
        catalogue,
        &document,
        &values,
        budget.limits().max_expanded_selections,
    );
    let fields = reader.flatten(&operation_def.node.selection_set, 0)?;
    if fields.len() > MAX_ROOT_FIELDS {
        return Err(QueryError::new(
            format!(
                "The query asks for {} root fields; at most {MAX_ROOT_FIELDS} are answered",
                fields.len()
            ),
            Some(operation_def.pos),
        ));
    }
    let mut roots = Vec::new();
    for field in fields {
        let key = response_key(&field.node);
        let name = field.node.name.node.as_str();
        let root = match name {
            "__typename" => Root::Typename,
            "_meta" => Root::Meta(reader.meta(&field.node.selection_set, 0)?),
            _ => {
                let Some((entity, many)) = catalogue.query_field(name) else {
                    return Err(QueryError::new(
                        format!("Type `Query` has no field `{name}`"),
                        Some(field.pos),
                    ));
                };
                if many {
                    Root::List(reader.list(entity, field, "Query")?)
                } else {
                    reader.single(entity, field)?
                }
            }
        };
        roots.push((key, root));
    }
    Ok(Plan {
        roots,
        block: reader.block,
    })
}

fn choose<'d>(
    document: &'d ExecutableDocument,
    operation: Option<&str>,
) -> Result<&'d Positioned<async_graphql::parser::types::OperationDefinition>, QueryError> {
    match (&document.operations, operation) {
        (DocumentOperations::Single(op), _) => Ok(op),
        (DocumentOperations::Multiple(ops), Some(name)) => ops
            .get(&Name::new(name))
            .ok_or_else(|| QueryError::new(format!("Unknown operation named `{name}`"), None)),
        (DocumentOperations::Multiple(ops), None) if ops.len() == 1 => {
            Ok(ops.values().next().expect("one"))
        }
        (DocumentOperations::Multiple(_), None) => Err(QueryError::new(
            "The document holds several operations; name the one to run in `operationName`",
            None,
        )),
    }
}

/// For tests: the first root of `query`, planned for `dialect` with no variables, which must be
/// a list.
#[cfg(test)]
pub(crate) fn first_list(dialect: Dialect, query: &str) -> ListQuery {
    let planned = plan(
        dialect,
        query,
        None,
        &Variables::default(),
        &Default::default(),
    )
    .unwrap();
    match planned.roots.into_iter().next() {
        Some((_, Root::List(list))) => list,
        _ => panic!("{query} starts with a list"),
    }
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
