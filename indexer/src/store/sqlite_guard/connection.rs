//! The connection of [`super::DRIVER`]: a `SqliteConnection` to which every call is handed,
//! and which, given a time limit, gives each statement a deadline as it starts.

use crate::priority::offer_core;
use futures::future::BoxFuture;
use futures::stream::{self, BoxStream, StreamExt, TryStreamExt};
use sqlx::Either;
use sqlx::sqlite::SqliteConnection;
use sqlx_core::Error;
use sqlx_core::any::{
    Any, AnyArguments, AnyConnectionBackend, AnyQueryResult, AnyRow, AnyStatement, AnyTypeInfo,
};
use sqlx_core::connection::{ConnectOptions, Connection};
use sqlx_core::describe::Describe;
use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;
use std::time::{Duration, Instant};

/// Virtual-machine steps of a statement between two calls of the progress handler, which
/// reads the clock: 10,000 steps are well under a millisecond, and the clock costs a few
/// nanoseconds of them. A statement shorter than this never calls it.
const PROGRESS_STEPS: i32 = 10_000;

/// A SQLite connection whose statements stop at a deadline, if it has a limit.
#[derive(Debug)]
pub(crate) struct GuardedConnection {
    pub(super) sqlite: SqliteConnection,
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

impl GuardedConnection {
    /// Connects to SQLite with `options`, its statements stopped `limit` after they start, its
    /// worker thread at the lowest priority if `low_priority`.
    pub(super) async fn establish(
        options: &sqlx::sqlite::SqliteConnectOptions,
        limit: Option<Duration>,
        low_priority: bool,
    ) -> Result<Self, Error> {
        let mut sqlite = options.connect().await?;
        if low_priority {
            lower_worker(&mut sqlite).await?;
        }
        let limit = match limit {
            Some(limit) => Some(StatementLimit::install(&mut sqlite, limit).await?),
            None if low_priority => {
                let mut handle = sqlite.lock_handle().await?;
                handle.set_progress_handler(PROGRESS_STEPS, || {
                    offer_core();
                    true
                });
                None
            }
            None => None,
        };
        Ok(Self { sqlite, limit })
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

impl AnyConnectionBackend for GuardedConnection {
    fn fetch_many<'q>(
        &'q mut self,
        query: &'q str,
        persistent: bool,
        arguments: Option<AnyArguments<'q>>,
    ) -> BoxStream<'q, sqlx::Result<Either<AnyQueryResult, AnyRow>>> {
        let Self { sqlite, limit } = self;
        let Some(limit) = limit else {
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
        query: &'q str,
        persistent: bool,
        arguments: Option<AnyArguments<'q>>,
    ) -> BoxFuture<'q, sqlx::Result<Option<AnyRow>>> {
        let Self { sqlite, limit } = self;
        let Some(limit) = limit else {
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

    // Everything below is SQLite's own, as sqlx's driver does it. A transaction's `BEGIN`,
    // `COMMIT` and `ROLLBACK` run outside the limit: no deadline stands after a statement that
    // finished, and after one left unfinished they take too few steps to meet the handler.

    fn name(&self) -> &str {
        AnyConnectionBackend::name(&self.sqlite)
    }

    fn close(self: Box<Self>) -> BoxFuture<'static, sqlx::Result<()>> {
        Connection::close(self.sqlite)
    }

    fn close_hard(self: Box<Self>) -> BoxFuture<'static, sqlx::Result<()>> {
        Connection::close_hard(self.sqlite)
    }

    fn ping(&mut self) -> BoxFuture<'_, sqlx::Result<()>> {
        AnyConnectionBackend::ping(&mut self.sqlite)
    }

    fn begin(&mut self, statement: Option<Cow<'static, str>>) -> BoxFuture<'_, sqlx::Result<()>> {
        AnyConnectionBackend::begin(&mut self.sqlite, statement)
    }

    fn commit(&mut self) -> BoxFuture<'_, sqlx::Result<()>> {
        AnyConnectionBackend::commit(&mut self.sqlite)
    }

    fn rollback(&mut self) -> BoxFuture<'_, sqlx::Result<()>> {
        AnyConnectionBackend::rollback(&mut self.sqlite)
    }

    fn start_rollback(&mut self) {
        AnyConnectionBackend::start_rollback(&mut self.sqlite)
    }

    fn get_transaction_depth(&self) -> usize {
        AnyConnectionBackend::get_transaction_depth(&self.sqlite)
    }

    fn cached_statements_size(&self) -> usize {
        AnyConnectionBackend::cached_statements_size(&self.sqlite)
    }

    fn clear_cached_statements(&mut self) -> BoxFuture<'_, sqlx::Result<()>> {
        AnyConnectionBackend::clear_cached_statements(&mut self.sqlite)
    }

    fn shrink_buffers(&mut self) {
        AnyConnectionBackend::shrink_buffers(&mut self.sqlite)
    }

    fn flush(&mut self) -> BoxFuture<'_, sqlx::Result<()>> {
        AnyConnectionBackend::flush(&mut self.sqlite)
    }

    fn should_flush(&self) -> bool {
        AnyConnectionBackend::should_flush(&self.sqlite)
    }

    fn as_migrate(
        &mut self,
    ) -> sqlx::Result<&mut (dyn sqlx_core::migrate::Migrate + Send + 'static)> {
        AnyConnectionBackend::as_migrate(&mut self.sqlite)
    }

    fn prepare_with<'c, 'q: 'c>(
        &'c mut self,
        sql: &'q str,
        parameters: &[AnyTypeInfo],
    ) -> BoxFuture<'c, sqlx::Result<AnyStatement<'q>>> {
        AnyConnectionBackend::prepare_with(&mut self.sqlite, sql, parameters)
    }

    fn describe<'q>(&'q mut self, sql: &'q str) -> BoxFuture<'q, sqlx::Result<Describe<Any>>> {
        AnyConnectionBackend::describe(&mut self.sqlite, sql)
    }
}

/// The transactions of the driver's `Database`: SQLite's (the trait is implemented in
/// `family.rs`).
#[derive(Debug)]
pub(crate) struct GuardedTransactions;
