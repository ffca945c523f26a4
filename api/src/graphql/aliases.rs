//! A limit on field aliases per request. Aliases let one small query ask for the same expensive
//! field hundreds of times; depth and complexity limits do not see that, this does.

use async_graphql::extensions::{Extension, ExtensionContext, ExtensionFactory, NextParseQuery};
use async_graphql::parser::types::{ExecutableDocument, Selection, SelectionSet};
use async_graphql::{ServerError, ServerResult, Variables};
use std::sync::Arc;

/// Most aliases a request may use.
pub const MAX_ALIASES: usize = 30;

/// The extension, for `Schema::build(..).extension(AliasLimit)`.
pub(crate) struct AliasLimit;

impl ExtensionFactory for AliasLimit {
    fn create(&self) -> Arc<dyn Extension> {
        Arc::new(AliasCheck)
    }
}

struct AliasCheck;

#[async_trait::async_trait]
impl Extension for AliasCheck {
    async fn parse_query(
        &self,
        ctx: &ExtensionContext<'_>,
        query: &str,
        variables: &Variables,
        next: NextParseQuery<'_>,
    ) -> ServerResult<ExecutableDocument> {
        let document = next.run(ctx, query, variables).await?;
        let used = aliases(&document);
        if used > MAX_ALIASES {
            return Err(ServerError::new(
                format!("the query uses {used} aliases; at most {MAX_ALIASES} are allowed"),
                None,
            ));
        }
        Ok(document)
    }
}

/// Aliases in every operation and fragment of `document`.
fn aliases(document: &ExecutableDocument) -> usize {
    let in_operations: usize = document
        .operations
        .iter()
        .map(|(_, op)| in_set(&op.node.selection_set.node))
        .sum();
    let in_fragments: usize = document
        .fragments
        .values()
        .map(|f| in_set(&f.node.selection_set.node))
        .sum();
    in_operations + in_fragments
}

fn in_set(set: &SelectionSet) -> usize {
    set.items
        .iter()
        .map(|item| match &item.node {
            Selection::Field(field) => {
                usize::from(field.node.alias.is_some()) + in_set(&field.node.selection_set.node)
            }
            Selection::InlineFragment(fragment) => in_set(&fragment.node.selection_set.node),
            Selection::FragmentSpread(_) => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_are_counted_in_operations_fragments_and_nested_fields() {
        let document = async_graphql::parser::parse_query(
            "query { a: agents { edges { n: node { id } } } ...F }
             fragment F on Query { b: indexerStatus { chainId } }",
        )
        .unwrap();
        assert_eq!(aliases(&document), 3);
    }
}
