//! What one query or mutation may spend once it runs, wherever it arrives: over HTTP or sent as
//! a graphql-ws `subscribe` message on a websocket. Each operation gets its own row budget
//! (`[api.reads] max_rows_per_request`, see [`crate::row_budget`]) and is stopped past
//! `[api.reads] query_time_limit_secs`; one sent on a websocket also holds one of the socket's
//! places while it runs (`[api.websocket] max_subscriptions_per_connection`, shared with its
//! subscriptions; see [`super::subscription_places`]), so a client cannot pile up thousands
//! of queries in flight on one socket, and its time is charged to the socket's client's share
//! of the server's time (over HTTP the middleware does that: `crate::limits`), a client over
//! its share getting a GraphQL error instead.
//!
//! An operation whose complexity (as validation counted it, lists by their page size) is above
//! `[api] low_priority_above_complexity` reads the store at low priority, through DataLoaders
//! of its own (`super::loader_set`), whoever sent it: a client pacing its costly questions to
//! stay under `low_priority_after_ms_per_client` would otherwise hold a fifth of a core of
//! normal-priority reads for as long as it likes.
//!
//! Subscriptions are not operations in this sense (they hold their place from their own
//! resolver, `super::subscription`): async-graphql runs the `execute` hook for each of their
//! events too, so a request is marked as a query or mutation ([`OneShot`]) when it is prepared,
//! and only those are held to these limits.

use super::loader_set::Loaders;
use super::subscription_places::LiveSubscriptions;
use crate::row_budget::RowBudget;
use crate::state::ApiState;
use crate::time_share::ChargeTo;
use agentindex_indexer::store::low_priority;
use async_graphql::extensions::{
    Extension, ExtensionContext, ExtensionFactory, NextExecute, NextPrepareRequest, NextValidation,
};
use async_graphql::parser::types::{DocumentOperations, ExecutableDocument, OperationType};
use async_graphql::{Data, Request, Response, ServerError, ServerResult, ValidationResult};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The extension, for `Schema::build(..).extension(OperationLimits::new(..))`.
pub(crate) struct OperationLimits(Arc<Limits>);

#[derive(Debug)]
struct Limits {
    max_rows: u64,
    time_limit: Duration,
    low_priority_above: usize,
}

impl OperationLimits {
    /// Operations of at most `max_rows` rows each, stopped after `time_limit`, reading at low
    /// priority when their complexity is above `low_priority_above`.
    pub(crate) fn new(max_rows: u64, time_limit: Duration, low_priority_above: usize) -> Self {
        Self(Arc::new(Limits {
            max_rows,
            time_limit,
            low_priority_above,
        }))
    }
}

impl ExtensionFactory for OperationLimits {
    fn create(&self) -> Arc<dyn Extension> {
        Arc::new(OperationCheck {
            limits: Arc::clone(&self.0),
            complexity: AtomicUsize::new(0),
        })
    }
}

/// The extension as one request sees it (async-graphql makes one per request).
struct OperationCheck {
    limits: Arc<Limits>,
    /// The complexity validation found, read when the operation runs.
    complexity: AtomicUsize,
}

/// Marks a request whose operation is a query or mutation (answered once), not a subscription.
struct OneShot;

/// Whether the operation `name` (or the only one) of `document` is a subscription.
fn is_subscription(document: &ExecutableDocument, name: Option<&str>) -> bool {
    let subscription = |ty: OperationType| ty == OperationType::Subscription;
    match (&document.operations, name) {
        (DocumentOperations::Single(operation), _) => subscription(operation.node.ty),
        (DocumentOperations::Multiple(operations), Some(name)) => operations
            .iter()
            .any(|(n, operation)| n.as_str() == name && subscription(operation.node.ty)),
        (DocumentOperations::Multiple(operations), None) => operations
            .values()
            .next()
            .is_some_and(|operation| subscription(operation.node.ty)),
    }
}

#[async_trait::async_trait]
impl Extension for OperationCheck {
    async fn prepare_request(
        &self,
        ctx: &ExtensionContext<'_>,
        mut request: Request,
        next: NextPrepareRequest<'_>,
    ) -> ServerResult<Request> {
        let name = request.operation_name.clone();
        let one_shot = !is_subscription(request.parsed_query()?, name.as_deref());
        if one_shot {
            request = request.data(OneShot);
        }
        next.run(ctx, request).await
    }

    async fn validation(
        &self,
        ctx: &ExtensionContext<'_>,
        next: NextValidation<'_>,
    ) -> Result<ValidationResult, Vec<ServerError>> {
        let result = next.run(ctx).await?;
        self.complexity.store(result.complexity, Ordering::Relaxed);
        Ok(result)
    }

    async fn execute(
        &self,
        ctx: &ExtensionContext<'_>,
        operation_name: Option<&str>,
        next: NextExecute<'_>,
    ) -> Response {
        // A subscription's events pass through here too: they are left as they are, bounded
        // by their page sizes, their subscription holding its place.
        if ctx.data_opt::<OneShot>().is_none() {
            return next.run(ctx, operation_name).await;
        }
        // On a websocket the connection's data holds its places; over HTTP there are none.
        let _place = match ctx
            .data_opt::<LiveSubscriptions>()
            .map(LiveSubscriptions::take)
        {
            Some(Err(full)) => {
                let error = ServerError::new(full.message, None);
                return Response::from_errors(vec![error]);
            }
            Some(Ok(place)) => Some(place),
            None => None,
        };
        let charge = ctx.data_opt::<ChargeTo>();
        if let Some(over) = charge.and_then(|c| c.time.refusal(c.client)) {
            return Response::from_errors(vec![ServerError::new(over.message(), None)]);
        }
        let started = Instant::now();
        let mut data = Data::default();
        data.insert(RowBudget::new(self.limits.max_rows));
        let limit = self.limits.time_limit;
        let costly = self.complexity.load(Ordering::Relaxed) > self.limits.low_priority_above;
        let lowered = ctx
            .data_opt::<ApiState>()
            .filter(|_| costly && !low_priority::in_scope());
        let running = async move {
            if let Some(state) = lowered {
                // Built inside the scope below: they read the low-priority pool, and so do
                // the batches they spawn.
                data.insert(Loaders::new(state));
            }
            tokio::time::timeout(limit, next.run_with_data(ctx, operation_name, data)).await
        };
        let outcome = match lowered {
            Some(state) => {
                state.metrics.low_priority();
                low_priority::scope(running).await
            }
            None => running.await,
        };
        let response = match outcome {
            Ok(response) => response,
            Err(_) => Response::from_errors(vec![ServerError::new(
                format!("the query ran longer than {limit:?} and was stopped"),
                None,
            )]),
        };
        if let Some(charge) = charge {
            charge.time.charge(charge.client, started.elapsed());
        }
        response
    }
}
