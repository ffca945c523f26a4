//! The budget on `/graphql`, as an async-graphql extension, so it holds wherever the schema runs
//! a request: `Schema::execute` over HTTP and `Schema::execute_stream` over the websocket alike.
//!
//! It hooks `prepare_request`, not `parse_query`: async-graphql's parse step also runs its
//! recursion and directive checks, which expand every fragment spread without memoising, so a
//! check after `next.run` in `parse_query` would come after the damage. Here the text is
//! checked, parsed once and measured, and the document handed on with
//! `Request::set_parsed_query`, so async-graphql neither parses again nor sees a document over
//! budget.

use super::QueryBudget;
use async_graphql::extensions::{
    Extension, ExtensionContext, ExtensionFactory, NextPrepareRequest,
};
use async_graphql::{Request, ServerError, ServerResult};
use std::sync::Arc;

/// The extension, for `Schema::build(..).extension(Budget::new(..))`.
pub(crate) struct Budget(Arc<QueryBudget>);

impl Budget {
    /// Checks every request against `budget`.
    pub(crate) fn new(budget: QueryBudget) -> Self {
        Self(Arc::new(budget))
    }
}

impl ExtensionFactory for Budget {
    fn create(&self) -> Arc<dyn Extension> {
        Arc::new(BudgetCheck(Arc::clone(&self.0)))
    }
}

struct BudgetCheck(Arc<QueryBudget>);

#[async_trait::async_trait]
impl Extension for BudgetCheck {
    async fn prepare_request(
        &self,
        ctx: &ExtensionContext<'_>,
        mut request: Request,
        next: NextPrepareRequest<'_>,
    ) -> ServerResult<Request> {
        self.0.check_text(&request.query).map_err(|e| refused(&e))?;
        self.0
            .check_variables(&request.variables)
            .map_err(|e| refused(&e))?;
        let document = async_graphql::parser::parse_query(&request.query)?;
        self.0.check_document(&document).map_err(|e| refused(&e))?;
        request.set_parsed_query(document);
        next.run(ctx, request).await
    }
}

fn refused(error: &super::BudgetError) -> ServerError {
    tracing::debug!(target: "agentindex::api", %error, "a query over budget was refused");
    error.server_error()
}
