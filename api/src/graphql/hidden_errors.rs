//! Resolvers return store errors with `?`; this extension replaces each of them in the response
//! (queries over HTTP and subscriptions over the websocket alike) by what
//! [`crate::client_error`] lets a client see, so no resolver can leak SQL by forgetting to map.

use crate::client_error;
use async_graphql::extensions::{
    Extension, ExtensionContext, ExtensionFactory, NextExecute, NextSubscribe,
};
use async_graphql::futures_util::StreamExt;
use async_graphql::futures_util::stream::BoxStream;
use async_graphql::{Response, ServerError};
use std::sync::Arc;

/// The extension, for `Schema::build(..).extension(HideInternalErrors)`.
pub(crate) struct HideInternalErrors;

impl ExtensionFactory for HideInternalErrors {
    fn create(&self) -> Arc<dyn Extension> {
        Arc::new(HideInternalErrors)
    }
}

#[async_trait::async_trait]
impl Extension for HideInternalErrors {
    async fn execute(
        &self,
        ctx: &ExtensionContext<'_>,
        operation_name: Option<&str>,
        next: NextExecute<'_>,
    ) -> Response {
        hidden(next.run(ctx, operation_name).await)
    }

    fn subscribe<'s>(
        &self,
        ctx: &ExtensionContext<'_>,
        stream: BoxStream<'s, Response>,
        next: NextSubscribe<'_>,
    ) -> BoxStream<'s, Response> {
        next.run(ctx, stream).map(hidden).boxed()
    }
}

fn hidden(mut response: Response) -> Response {
    for error in &mut response.errors {
        if client_error::is_internal(error) {
            let mut replaced: ServerError =
                client_error::hide("reading the index", &error.message).graphql();
            replaced.locations = std::mem::take(&mut error.locations);
            replaced.path = std::mem::take(&mut error.path);
            *error = replaced;
        }
    }
    response
}
