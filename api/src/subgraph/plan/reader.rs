//! The request's document as the planner reads it: fragments inlined (and counted against the
//! budget as they expand), arguments with their variables substituted, and the arguments every
//! field shares (`block`, `first`, `skip`) checked in graph-node's words.

use super::error::QueryError;
use crate::budget::BudgetError;
use crate::subgraph::catalogue::Catalogue;
use async_graphql::parser::Positioned;
use async_graphql::parser::types::{
    ExecutableDocument, Field as QueryField, Selection, SelectionSet,
};
use async_graphql::{Value as ConstValue, Variables};
use std::cell::Cell;

/// Deepest selection accepted.
const MAX_DEPTH: usize = 10;

/// The key `field` is answered under: its alias, else its name.
pub(super) fn response_key(field: &QueryField) -> String {
    field.alias.as_ref().unwrap_or(&field.name).node.to_string()
}

/// Reads one document; the selection's fields are checked with it too (selection.rs).
pub(super) struct Reader<'a> {
    /// The entities fields are checked against, their SQL written for the database at hand.
    pub(super) catalogue: &'static Catalogue,
    document: &'a ExecutableDocument,
    variables: &'a Variables,
    /// The block a `block: { number }` argument asked for (the highest, when several do).
    pub(super) block: Option<i64>,
    /// Fields [`Reader::flatten`] produced so far, over the whole plan.
    expanded: Cell<usize>,
    /// The most it may produce (`max_expanded_selections`): the budget checked the document
    /// already, this keeps the expansion itself from ever outgrowing it.
    max_expanded: usize,
}

impl<'a> Reader<'a> {
    /// A reader of `document` with `variables` (defaults filled in) against `catalogue`,
    /// expanding at most `max_expanded` fields.
    pub(super) fn new(
        catalogue: &'static Catalogue,
        document: &'a ExecutableDocument,
        variables: &'a Variables,
        max_expanded: usize,
    ) -> Self {
        Self {
            catalogue,
            document,
            variables,
            block: None,
            expanded: Cell::new(0),
            max_expanded,
        }
    }

    /// The fields of `set`, fragments inlined, in document order: borrowed from the document,
    /// never copied, and counted against the budget as they are produced.
    pub(super) fn flatten(
        &self,
        set: &'a Positioned<SelectionSet>,
        depth: usize,
    ) -> Result<Vec<&'a Positioned<QueryField>>, QueryError> {
        let mut out = Vec::new();
        self.flatten_into(set, depth, &mut out)?;
        Ok(out)
    }

    pub(super) fn flatten_into(
        &self,
        set: &'a Positioned<SelectionSet>,
        depth: usize,
        out: &mut Vec<&'a Positioned<QueryField>>,
    ) -> Result<(), QueryError> {
        if depth > MAX_DEPTH {
            return Err(QueryError::new(
                format!("query has a depth that exceeds the limit of `{MAX_DEPTH}`"),
                Some(set.pos),
            ));
        }
        for selection in &set.node.items {
            match &selection.node {
                Selection::Field(field) => {
                    let produced = self.expanded.get() + 1;
                    if produced > self.max_expanded {
                        return Err(BudgetError::TooManySelections {
                            limit: self.max_expanded,
                        }
                        .into());
                    }
                    self.expanded.set(produced);
                    out.push(field);
                }
                Selection::InlineFragment(fragment) => {
                    self.flatten_into(&fragment.node.selection_set, depth + 1, out)?;
                }
                Selection::FragmentSpread(spread) => {
                    let name = &spread.node.fragment_name.node;
                    let fragment = self.document.fragments.get(name).ok_or_else(|| {
                        QueryError::new(format!("Unknown fragment `{name}`"), Some(spread.pos))
                    })?;
                    self.flatten_into(&fragment.node.selection_set, depth + 1, out)?;
                }
            }
        }
        Ok(())
    }

    /// The argument `name` of `field`, variables substituted; `None` when absent.
    pub(super) fn argument(
        &self,
        field: &Positioned<QueryField>,
        name: &str,
    ) -> Result<Option<ConstValue>, QueryError> {
        let Some((_, value)) = field.node.arguments.iter().find(|(n, _)| n.node == name) else {
            return Ok(None);
        };
        let resolved = value.node.clone().into_const_with(|variable| {
            Ok::<_, QueryError>(
                self.variables
                    .get(&variable)
                    .cloned()
                    .unwrap_or(ConstValue::Null),
            )
        })?;
        Ok((!matches!(resolved, ConstValue::Null)).then_some(resolved))
    }

    /// Refuses any argument of `field` not in `allowed`.
    pub(super) fn only_arguments(
        &self,
        field: &Positioned<QueryField>,
        owner: &str,
        allowed: &[&str],
    ) -> Result<(), QueryError> {
        for (name, _) in &field.node.arguments {
            if !allowed.contains(&name.node.as_str()) {
                return Err(QueryError::new(
                    format!(
                        "Unknown argument `{}` on field `{owner}.{}`",
                        name.node, field.node.name.node
                    ),
                    Some(name.pos),
                ));
            }
        }
        Ok(())
    }

    /// Notes a `block: { number }` argument.
    pub(super) fn block(&mut self, field: &Positioned<QueryField>) -> Result<(), QueryError> {
        let Some(block) = self.argument(field, "block")? else {
            return Ok(());
        };
        let ConstValue::Object(fields) = &block else {
            return Err(QueryError::new(
                "`block` takes an object such as `{ number: 123 }`",
                Some(field.pos),
            ));
        };
        for (key, value) in fields {
            match (key.as_str(), value) {
                ("number", ConstValue::Number(n)) => {
                    let number = n.as_i64().filter(|n| *n >= 0).ok_or_else(|| {
                        QueryError::new(format!("Invalid block number `{n}`"), Some(field.pos))
                    })?;
                    self.block = Some(self.block.map_or(number, |b| b.max(number)));
                }
                ("number_gte", ConstValue::Number(_)) => {}
                _ => {
                    return Err(QueryError::new(
                        format!("agentindex answers `block` by number only, not by `{key}`"),
                        Some(field.pos),
                    ));
                }
            }
        }
        Ok(())
    }

    pub(super) fn count(
        &self,
        field: &Positioned<QueryField>,
        name: &str,
        default: i64,
        max: i64,
    ) -> Result<i64, QueryError> {
        match self.argument(field, name)? {
            None => Ok(default),
            Some(ConstValue::Number(n)) => match n.as_i64() {
                Some(value) if (0..=max).contains(&value) => Ok(value),
                _ => Err(QueryError::new(
                    format!("The `{name}` argument must be between 0 and {max}, but is {n}"),
                    Some(field.pos),
                )),
            },
            Some(other) => Err(QueryError::new(
                format!("Invalid value `{other}` for argument `{name}`: an Int is expected"),
                Some(field.pos),
            )),
        }
    }
}
