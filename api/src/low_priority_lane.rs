//! The low-priority lane: where the requests of a client that has lately used much of its
//! share of the server's time ([`crate::time_share::TimeShare::is_heavy`]) run. A runtime of
//! one thread at the lowest priority ([`agentindex_indexer::priority`]), its requests' reads on
//! the store's low-priority connections ([`low_priority`]) and their relations through
//! DataLoaders of their own (`crate::graphql::loader_set`). On two cores a costly client at
//! normal priority takes turns with everyone's cheap requests and stretches their tails; here
//! it gets only the time they leave.

use agentindex_indexer::store::low_priority;
use std::future::Future;
use tokio::runtime::{Builder, Handle, Runtime};

/// Name of the lane's threads.
const THREAD_NAME: &str = "api-low-priority";

/// The lane's runtime, if it could be started.
#[derive(Debug)]
pub struct LowPriorityLane {
    runtime: Option<Runtime>,
    handle: Option<Handle>,
}

/// Marks a request sent to the lane, for handlers that run its work in a task of their own
/// (where [`low_priority::scope`] does not follow): the MCP server re-enters the scope.
#[derive(Debug, Clone, Copy)]
pub struct LoweredRequest;

/// The lane stopped (the server is shutting down) before the request ended.
#[derive(Debug, thiserror::Error)]
#[error("the server is shutting down")]
pub struct LaneClosed;

impl LowPriorityLane {
    /// Starts the lane's thread. Where it cannot be started, requests sent to the lane run
    /// where they are, their reads still on the low-priority connections.
    pub fn start() -> Self {
        let built = Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name(THREAD_NAME)
            .on_thread_start(|| {
                agentindex_indexer::priority::lower_this_thread("the API's low-priority lane")
            })
            .enable_all()
            .build();
        match built {
            Ok(runtime) => Self {
                handle: Some(runtime.handle().clone()),
                runtime: Some(runtime),
            },
            Err(error) => {
                tracing::warn!(
                    target: "agentindex::api", %error,
                    "no low-priority lane: heavy clients' requests run beside everyone's"
                );
                Self {
                    runtime: None,
                    handle: None,
                }
            }
        }
    }

    /// Runs `future` on the lane, its reads at low priority. Dropping the returned future (the
    /// client went away) stops it there too.
    pub async fn run<F>(&self, future: F) -> Result<F::Output, LaneClosed>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let Some(handle) = &self.handle else {
            return Ok(low_priority::scope(future).await);
        };
        let task = handle.spawn(low_priority::scope(OfferingCore(Box::pin(future))));
        let _stop_if_dropped = AbortOnDrop(task.abort_handle());
        match task.await {
            Ok(output) => Ok(output),
            Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
            Err(_) => Err(LaneClosed),
        }
    }
}

impl Drop for LowPriorityLane {
    fn drop(&mut self) {
        // Dropped from async code when the server's last handle goes: a runtime may not block
        // there, so its thread is told to stop and not waited for.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// A future that offers the lane's core to other threads each time it is polled
/// ([`agentindex_indexer::priority::offer_core`]): between polls the lane's thread does the
/// request's own CPU work (GraphQL execution, encoding), which the kernel may not preempt.
struct OfferingCore<F>(std::pin::Pin<Box<F>>);

impl<F: Future> Future for OfferingCore<F> {
    type Output = F::Output;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<F::Output> {
        agentindex_indexer::priority::offer_core();
        self.0.as_mut().poll(cx)
    }
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentindex_indexer::priority::{is_lowered, this_thread};

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_request_runs_on_a_lowered_thread_with_low_priority_reads() {
        let lane = LowPriorityLane::start();
        let (lowered, scoped, name) = lane
            .run(async {
                let name = std::thread::current().name().map(str::to_owned);
                (
                    is_lowered(this_thread().unwrap()),
                    low_priority::in_scope(),
                    name,
                )
            })
            .await
            .unwrap();
        assert_eq!(lowered, Some(true));
        assert!(scoped);
        assert_eq!(name.as_deref(), Some(THREAD_NAME));
        // The caller's own thread is untouched.
        assert!(!low_priority::in_scope());
    }

    #[tokio::test]
    async fn dropping_the_caller_stops_the_request_on_the_lane() {
        /// Says when the request's future is dropped (by the lane's abort, as it never ends).
        struct Dropped(Option<tokio::sync::oneshot::Sender<()>>);
        impl Drop for Dropped {
            fn drop(&mut self) {
                if let Some(tx) = self.0.take() {
                    let _ = tx.send(());
                }
            }
        }
        let lane = LowPriorityLane::start();
        let (started_tx, started_rx) = tokio::sync::oneshot::channel();
        let (dropped_tx, dropped_rx) = tokio::sync::oneshot::channel();
        let request = lane.run(async move {
            let _dropped = Dropped(Some(dropped_tx));
            let _ = started_tx.send(());
            std::future::pending::<()>().await;
        });
        tokio::select! {
            _ = request => panic!("a pending request cannot end"),
            _ = started_rx => {}
        }
        // The caller's future was dropped as `select!` ended: the request on the lane is too.
        tokio::time::timeout(std::time::Duration::from_secs(10), dropped_rx)
            .await
            .expect("the request on the lane is stopped")
            .expect("its future was dropped, not leaked");
        assert_eq!(lane.run(async { 7 }).await.unwrap(), 7);
    }
}
