//! The pass over a parsed document, before validation or planning expands it: how many
//! selections, how deep, how wide and how many aliases it has once every fragment spread is
//! replaced by its fragment. Each fragment is measured once and remembered, so the pass is linear
//! in the document even when its expansion is exponential (fragments spreading fragments); a
//! fragment that spreads itself is refused.
//!
//! Depth counts every selection set entered (a field's, an inline fragment's, a spread
//! fragment's), as async-graphql's recursion limit and the subgraph planner count it. The walk's
//! own recursion is bounded by `max_nesting`, since it fails as soon as it would go deeper.

use super::BudgetError;
use agentindex_indexer::config::QueryLimitsConfig;
use async_graphql::Positioned;
use async_graphql::parser::types::{ExecutableDocument, Selection, SelectionSet};
use std::collections::HashMap;

/// What a selection set (or fragment) amounts to once expanded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Shape {
    /// Fields, spreads and inline fragments, expanded.
    pub(crate) selections: usize,
    /// Levels of selection sets below this one.
    pub(crate) depth: usize,
    /// Aliased fields, expanded.
    pub(crate) aliases: usize,
    /// Fields this set contributes to its own level (its fragments' merged in).
    pub(crate) width: usize,
}

/// The document's measure: its operations' shapes summed, and how many selections the walk
/// visited (linear in the document's text, however large the expansion).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Measure {
    /// Every operation's expanded selections, aliases and deepest nesting.
    pub(crate) expanded: Shape,
    /// Selections the walk looked at.
    pub(crate) steps: usize,
}

/// Measures `document` against `limits`, refusing it at the first limit passed.
pub(crate) fn check(
    document: &ExecutableDocument,
    limits: &QueryLimitsConfig,
) -> Result<Measure, BudgetError> {
    let mut walk = Walk {
        document,
        limits,
        fragments: HashMap::new(),
        steps: 0,
    };
    let mut expanded = Shape::default();
    for (_, operation) in document.operations.iter() {
        let shape = walk.set(&operation.node.selection_set, 1)?;
        expanded.selections = expanded.selections.saturating_add(shape.selections);
        expanded.aliases = expanded.aliases.saturating_add(shape.aliases);
        expanded.depth = expanded.depth.max(shape.depth + 1);
        if expanded.selections > limits.max_expanded_selections {
            return Err(BudgetError::TooManySelections {
                limit: limits.max_expanded_selections,
            });
        }
    }
    // Fragments no operation spreads are refused by validation, but measured first: nothing
    // unmeasured reaches a validator. In document order, so a refusal names the same fragment
    // every time.
    let mut unspread: Vec<_> = document
        .fragments
        .iter()
        .filter(|(name, _)| !walk.fragments.contains_key(name.as_str()))
        .collect();
    unspread.sort_by_key(|(_, fragment)| fragment.pos);
    for (name, fragment) in unspread {
        if !walk.fragments.contains_key(name.as_str()) {
            walk.fragment(name.as_str(), &fragment.node.selection_set, 1, fragment.pos)?;
        }
    }
    if expanded.aliases > limits.max_aliases {
        return Err(BudgetError::TooManyAliases {
            aliases: expanded.aliases,
            limit: limits.max_aliases,
        });
    }
    Ok(Measure {
        expanded,
        steps: walk.steps,
    })
}

/// A fragment being measured (a spread of it now is a cycle) or measured.
#[derive(Debug, Clone, Copy)]
enum Fragment {
    Measuring,
    Measured(Shape),
}

struct Walk<'d> {
    document: &'d ExecutableDocument,
    limits: &'d QueryLimitsConfig,
    fragments: HashMap<&'d str, Fragment>,
    steps: usize,
}

impl<'d> Walk<'d> {
    /// The shape of `set`, found at nesting `depth` (the operation's own set is at 1).
    fn set(
        &mut self,
        set: &'d Positioned<SelectionSet>,
        depth: usize,
    ) -> Result<Shape, BudgetError> {
        if depth > self.limits.max_nesting {
            return Err(BudgetError::TooDeep {
                limit: self.limits.max_nesting,
                at: set.pos,
            });
        }
        let mut shape = Shape::default();
        for item in &set.node.items {
            self.steps += 1;
            let inner = match &item.node {
                Selection::Field(field) => {
                    shape.width += 1;
                    shape.aliases += usize::from(field.node.alias.is_some());
                    let sub = &field.node.selection_set;
                    if sub.node.items.is_empty() {
                        None
                    } else {
                        Some(self.set(sub, depth + 1)?)
                    }
                }
                Selection::InlineFragment(fragment) => {
                    let inner = self.set(&fragment.node.selection_set, depth + 1)?;
                    shape.width += inner.width;
                    Some(inner)
                }
                Selection::FragmentSpread(spread) => {
                    let name = spread.node.fragment_name.node.as_str();
                    // An unknown fragment is left to validation to name.
                    let inner = match self.document.fragments.get(name) {
                        Some(fragment) => Some(self.fragment(
                            name,
                            &fragment.node.selection_set,
                            depth + 1,
                            spread.pos,
                        )?),
                        None => None,
                    };
                    shape.width += inner.map_or(0, |inner| inner.width);
                    inner
                }
            };
            shape.selections += 1;
            if let Some(inner) = inner {
                shape.selections = shape.selections.saturating_add(inner.selections);
                shape.aliases = shape.aliases.saturating_add(inner.aliases);
                shape.depth = shape.depth.max(inner.depth + 1);
            }
            if shape.selections > self.limits.max_expanded_selections {
                return Err(BudgetError::TooManySelections {
                    limit: self.limits.max_expanded_selections,
                });
            }
        }
        if shape.width > self.limits.max_fields_per_level {
            return Err(BudgetError::TooWide {
                fields: shape.width,
                limit: self.limits.max_fields_per_level,
                at: set.pos,
            });
        }
        Ok(shape)
    }

    /// The shape of fragment `name` (whose set is `set`) spread at `spread` with its set at
    /// nesting `depth`: measured the first time, remembered after.
    fn fragment(
        &mut self,
        name: &'d str,
        set: &'d Positioned<SelectionSet>,
        depth: usize,
        spread: async_graphql::Pos,
    ) -> Result<Shape, BudgetError> {
        match self.fragments.get(name) {
            Some(Fragment::Measuring) => Err(BudgetError::FragmentCycle {
                name: name.to_string(),
                at: spread,
            }),
            Some(Fragment::Measured(shape)) => {
                if depth + shape.depth > self.limits.max_nesting {
                    return Err(BudgetError::TooDeep {
                        limit: self.limits.max_nesting,
                        at: spread,
                    });
                }
                Ok(*shape)
            }
            None => {
                self.fragments.insert(name, Fragment::Measuring);
                let shape = self.set(set, depth)?;
                self.fragments.insert(name, Fragment::Measured(shape));
                Ok(shape)
            }
        }
    }
}

#[cfg(test)]
#[path = "document_tests.rs"]
pub(crate) mod tests;
