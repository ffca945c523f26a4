//! The connection of a wrapped driver, which `Any` calls: the native connection and the
//! wrapper's state. Statements go through the wrapper ([`Wrapper::fetch_many`],
//! [`Wrapper::fetch_optional`]); everything else goes to the native connection as sqlx's own
//! driver hands it, once the wrapper says the connection is still usable.

use super::{BaseConnection, Wrapper};
use futures::future::{self, BoxFuture};
use futures::stream::{self, BoxStream, StreamExt};
use sqlx::Either;
use sqlx_core::any::{
    Any, AnyArguments, AnyConnectionBackend, AnyQueryResult, AnyRow, AnyStatement, AnyTypeInfo,
};
use sqlx_core::describe::Describe;
use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

/// A native connection with the state of wrapper `W`.
pub(crate) struct WrappedConnection<W: Wrapper> {
    pub(super) base: BaseConnection<W>,
    pub(super) wrapper: W,
}

impl<W: Wrapper> fmt::Debug for WrappedConnection<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WrappedConnection")
            .field("base", &self.base)
            .field("wrapper", &self.wrapper)
            .finish()
    }
}

/// The transactions of the driver's `Database`: the native ones (the trait is implemented in
/// `family.rs`).
pub(crate) struct WrappedTransactions<W>(PhantomData<fn() -> W>);

/// `call` if the wrapper says the connection is usable, else its refusal.
fn if_usable<'a, T: Send + 'a, W: Wrapper>(
    wrapper: &W,
    call: impl FnOnce() -> BoxFuture<'a, sqlx::Result<T>>,
) -> BoxFuture<'a, sqlx::Result<T>> {
    match wrapper.usable() {
        Ok(()) => call(),
        Err(refused) => Box::pin(future::ready(Err(refused))),
    }
}

impl<W: Wrapper> AnyConnectionBackend for WrappedConnection<W> {
    fn fetch_many<'q>(
        &'q mut self,
        query: &'q str,
        persistent: bool,
        arguments: Option<AnyArguments<'q>>,
    ) -> BoxStream<'q, sqlx::Result<Either<AnyQueryResult, AnyRow>>> {
        if let Err(refused) = self.wrapper.usable() {
            return stream::once(future::ready(Err(refused))).boxed();
        }
        self.wrapper
            .fetch_many(&mut self.base, query, persistent, arguments)
    }

    fn fetch_optional<'q>(
        &'q mut self,
        query: &'q str,
        persistent: bool,
        arguments: Option<AnyArguments<'q>>,
    ) -> BoxFuture<'q, sqlx::Result<Option<AnyRow>>> {
        let Self { base, wrapper } = self;
        if let Err(refused) = wrapper.usable() {
            return Box::pin(future::ready(Err(refused)));
        }
        wrapper.fetch_optional(base, query, persistent, arguments)
    }

    fn ping(&mut self) -> BoxFuture<'_, sqlx::Result<()>> {
        if_usable(&self.wrapper, || AnyConnectionBackend::ping(&mut self.base))
    }

    fn shrink_buffers(&mut self) {
        self.wrapper.shrink_buffers();
        AnyConnectionBackend::shrink_buffers(&mut self.base)
    }

    // Everything below is the native connection's own, as sqlx's driver does it.

    fn name(&self) -> &str {
        AnyConnectionBackend::name(&self.base)
    }

    fn close(self: Box<Self>) -> BoxFuture<'static, sqlx::Result<()>> {
        AnyConnectionBackend::close(Box::new(self.base))
    }

    fn close_hard(self: Box<Self>) -> BoxFuture<'static, sqlx::Result<()>> {
        AnyConnectionBackend::close_hard(Box::new(self.base))
    }

    fn begin(&mut self, statement: Option<Cow<'static, str>>) -> BoxFuture<'_, sqlx::Result<()>> {
        if_usable(&self.wrapper, || {
            AnyConnectionBackend::begin(&mut self.base, statement)
        })
    }

    fn commit(&mut self) -> BoxFuture<'_, sqlx::Result<()>> {
        if_usable(&self.wrapper, || {
            AnyConnectionBackend::commit(&mut self.base)
        })
    }

    fn rollback(&mut self) -> BoxFuture<'_, sqlx::Result<()>> {
        if_usable(&self.wrapper, || {
            AnyConnectionBackend::rollback(&mut self.base)
        })
    }

    fn start_rollback(&mut self) {
        AnyConnectionBackend::start_rollback(&mut self.base)
    }

    fn get_transaction_depth(&self) -> usize {
        AnyConnectionBackend::get_transaction_depth(&self.base)
    }

    fn cached_statements_size(&self) -> usize {
        // The native connection's own count: sqlx's `Any` side of SQLite's connection does not
        // pass it on (it says 0).
        sqlx::Connection::cached_statements_size(&self.base)
    }

    fn clear_cached_statements(&mut self) -> BoxFuture<'_, sqlx::Result<()>> {
        if_usable(&self.wrapper, || {
            AnyConnectionBackend::clear_cached_statements(&mut self.base)
        })
    }

    fn flush(&mut self) -> BoxFuture<'_, sqlx::Result<()>> {
        if_usable(&self.wrapper, || {
            AnyConnectionBackend::flush(&mut self.base)
        })
    }

    fn should_flush(&self) -> bool {
        AnyConnectionBackend::should_flush(&self.base)
    }

    fn as_migrate(
        &mut self,
    ) -> sqlx::Result<&mut (dyn sqlx_core::migrate::Migrate + Send + 'static)> {
        self.wrapper.usable()?;
        AnyConnectionBackend::as_migrate(&mut self.base)
    }

    fn prepare_with<'c, 'q: 'c>(
        &'c mut self,
        sql: &'q str,
        parameters: &[AnyTypeInfo],
    ) -> BoxFuture<'c, sqlx::Result<AnyStatement<'q>>> {
        if_usable(&self.wrapper, || {
            AnyConnectionBackend::prepare_with(&mut self.base, sql, parameters)
        })
    }

    fn describe<'q>(&'q mut self, sql: &'q str) -> BoxFuture<'q, sqlx::Result<Describe<Any>>> {
        if_usable(&self.wrapper, || {
            AnyConnectionBackend::describe(&mut self.base, sql)
        })
    }
}
