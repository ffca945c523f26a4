//! What [`super::DRIVER`] adds to each SQLite connection ([`StatementGuard`]): given a time
//! limit, a deadline for each statement as it starts, and given a low priority, a worker thread
//! that runs at the lowest priority. Everything else is SQLite's own connection, handed every
//! call by the shared plumbing of `wrapped_driver`.

use super::options::{self, GuardParams};
use crate::priority::offer_core;
use crate::store::wrapped_driver::Wrapper;
use futures::future::BoxFuture;
use futures::stream::{self, BoxStream, StreamExt, TryStreamExt};
use sqlx::Either;
use sqlx::sqlite::SqliteConnection;
use sqlx::sqlite::{Sqlite, SqliteConnectOptions};
use sqlx_core::Error;
use sqlx_core::any::{AnyArguments, AnyConnectionBackend, AnyQueryResult, AnyRow};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;
use std::time::{Duration, Instant};
use url::Url;

/// Virtual-machine steps of a statement between two calls of the progress handler, which
/// reads the clock: 10,000 steps are well under a millisecond, and the clock costs a few
/// nanoseconds of them. A statement shorter than this never calls it.
const PROGRESS_STEPS: i32 = 10_000;

/// The state of a connection of the driver: the limit on its statements, if it has one.
#[derive(Debug)]
pub(crate) struct StatementGuard {
    limit: Option<StatementLimit>,
}

/// The time a statement may run, and the state of the connection's latest statement.
#[derive(Debug)]
struct StatementLimit {
    limit: Duration,
    deadline: Deadline,
    /// A statement was started and not seen to its end: its caller dropped it (a request past
    /// its time limit) or stopped reading its rows, and sqlx's worker may be running it still.
    unfinished: bool,
}

/// When the running statement must stop, shared with the progress handler on sqlx's worker
/// thread.
#[derive(Debug, Clone)]
struct Deadline {
    epoch: Instant,
    /// Nanoseconds after `epoch` (milliseconds would let a statement stop up to one early);
    /// `u64::MAX` while no statement is limited.
    at_nanos: Arc<AtomicU64>,
}

impl Deadline {
    fn unset() -> Self {
        Self {
            epoch: Instant::now(),
            at_nanos: Arc::new(AtomicU64::new(u64::MAX)),
        }
    }

    fn set(&self, from_now: Duration) {
        let at = nanos(self.epoch.elapsed() + from_now);
        self.at_nanos.store(at, Ordering::Relaxed);
    }

    fn unset_now(&self) {
        self.at_nanos.store(u64::MAX, Ordering::Relaxed);
    }

    fn passed(&self) -> bool {
        nanos(self.epoch.elapsed()) >= self.at_nanos.load(Ordering::Relaxed)
    }
}

/// `duration` in nanoseconds, `u64::MAX` past 584 years.
fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

impl StatementLimit {
    /// Installs the progress handler that stops `sqlite`'s statements past their deadline (and,
    /// on a low-priority connection, offers the worker's core to others, see [`offer_core`]).
    async fn install(sqlite: &mut SqliteConnection, limit: Duration) -> Result<Self, Error> {
        let deadline = Deadline::unset();
        let handler = deadline.clone();
        sqlite
            .lock_handle()
            .await?
            .set_progress_handler(PROGRESS_STEPS, move || {
                offer_core();
                !handler.passed()
            });
        Ok(Self {
            limit,
            deadline,
            unfinished: false,
        })
    }

    /// Gives the next statement on `sqlite` the limit from now. A statement left unfinished is
    /// waited for first, until it stops at its own deadline: setting the new one while it runs
    /// would push its end back, and a client timing out again and again would keep it running.
    async fn start(&mut self, sqlite: &mut SqliteConnection) -> Result<(), Error> {
        if self.unfinished {
            // sqlx's worker hands the handle over only between statements.
            drop(sqlite.lock_handle().await?);
        }
        self.deadline.set(self.limit);
        self.unfinished = true;
        Ok(())
    }

    /// The statement ran to its end: no deadline stands until the next one starts.
    fn finish(&mut self) {
        self.deadline.unset_now();
        self.unfinished = false;
    }
}

impl StatementGuard {
    /// Sets up `sqlite`, just opened, as `params` ask: its statements stopped `limit` after they
    /// start, its worker thread at the lowest priority if `low_priority`.
    async fn set_up(sqlite: &mut SqliteConnection, params: &GuardParams) -> Result<Self, Error> {
        if params.low_priority {
            lower_worker(sqlite).await?;
        }
        let limit = match params.limit {
            Some(limit) => Some(StatementLimit::install(sqlite, limit).await?),
            None if params.low_priority => {
                let mut handle = sqlite.lock_handle().await?;
                handle.set_progress_handler(PROGRESS_STEPS, || {
                    offer_core();
                    true
                });
                None
            }
            None => None,
        };
        Ok(Self { limit })
    }
}

/// Lowers the priority of `sqlite`'s worker thread (each connection has one of its own, for
/// its whole life). Code runs on that thread only as SQLite calls back into it: the progress
/// handler, called here at every step of one trivial statement, then removed.
async fn lower_worker(sqlite: &mut SqliteConnection) -> Result<(), Error> {
    sqlite.lock_handle().await?.set_progress_handler(1, || {
        crate::priority::lower_this_thread("a low-priority SQLite connection's worker");
        true
    });
    sqlx::Executor::execute(&mut *sqlite, "SELECT 1").await?;
    sqlite.lock_handle().await?.remove_progress_handler();
    Ok(())
}

impl Wrapper for StatementGuard {
    type Base = Sqlite;
    type Params = GuardParams;

    fn split_url(url: &Url) -> Result<(GuardParams, Url), Error> {
        options::split_own(url)
    }

    fn adjust(options: SqliteConnectOptions, params: &GuardParams) -> SqliteConnectOptions {
        options::name_workers(options, params)
    }

    fn attach<'c>(
        sqlite: &'c mut SqliteConnection,
        params: &'c GuardParams,
    ) -> BoxFuture<'c, Result<Self, Error>> {
        Box::pin(Self::set_up(sqlite, params))
    }

    fn fetch_many<'q>(
        &'q mut self,
        sqlite: &'q mut SqliteConnection,
        query: &'q str,
        persistent: bool,
        arguments: Option<AnyArguments<'q>>,
    ) -> BoxStream<'q, sqlx::Result<Either<AnyQueryResult, AnyRow>>> {
        let Some(limit) = &mut self.limit else {
            return AnyConnectionBackend::fetch_many(sqlite, query, persistent, arguments);
        };
        let limited = async move {
            limit.start(sqlite).await?;
            let results = AnyConnectionBackend::fetch_many(sqlite, query, persistent, arguments);
            // Reached once every result was read; a stream dropped before leaves the statement
            // unfinished.
            let end = stream::poll_fn(move |_| {
                limit.finish();
                Poll::Ready(None)
            });
            Ok::<_, Error>(results.chain(end))
        };
        Box::pin(stream::once(limited).try_flatten())
    }

    fn fetch_optional<'q>(
        &'q mut self,
        sqlite: &'q mut SqliteConnection,
        query: &'q str,
        persistent: bool,
        arguments: Option<AnyArguments<'q>>,
    ) -> BoxFuture<'q, sqlx::Result<Option<AnyRow>>> {
        let Some(limit) = &mut self.limit else {
            return AnyConnectionBackend::fetch_optional(sqlite, query, persistent, arguments);
        };
        Box::pin(async move {
            limit.start(sqlite).await?;
            let row =
                AnyConnectionBackend::fetch_optional(sqlite, query, persistent, arguments).await;
            limit.finish();
            row
        })
    }

    // A transaction's `BEGIN`, `COMMIT` and `ROLLBACK` run outside the limit: no deadline
    // stands after a statement that finished, and after one left unfinished they take too few
    // steps to meet the handler.
}
