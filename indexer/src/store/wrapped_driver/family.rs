//! The sqlx traits that tie a wrapped driver's types into one family: the connection as a
//! `Connection` of [`Wrapped`] with its [`WrappedOptions`], and its transactions. Each of these
//! names the others, so they live here, apart from the types they join (the connection in
//! `connection.rs`, the database in `database.rs`, the options in `options.rs`), which then
//! import one another in one direction only.

use super::Wrapper;
use super::connection::{WrappedConnection, WrappedTransactions};
use super::database::Wrapped;
use super::options::WrappedOptions;
use futures::future::BoxFuture;
use sqlx_core::Error;
use sqlx_core::any::AnyConnectionBackend;
use sqlx_core::connection::Connection;
use sqlx_core::transaction::{Transaction, TransactionManager};
use std::borrow::Cow;

/// The connection as a connection of [`Wrapped`], which sqlx's registry requires; `Any` calls
/// its `AnyConnectionBackend` methods (in `connection.rs`) instead, and so do these.
impl<W: Wrapper> Connection for WrappedConnection<W> {
    type Database = Wrapped<W>;
    type Options = WrappedOptions<W>;

    fn close(self) -> BoxFuture<'static, Result<(), Error>> {
        AnyConnectionBackend::close(Box::new(self))
    }

    fn close_hard(self) -> BoxFuture<'static, Result<(), Error>> {
        AnyConnectionBackend::close_hard(Box::new(self))
    }

    fn ping(&mut self) -> BoxFuture<'_, Result<(), Error>> {
        AnyConnectionBackend::ping(self)
    }

    fn begin(&mut self) -> BoxFuture<'_, Result<Transaction<'_, Wrapped<W>>, Error>> {
        Transaction::begin(self, None)
    }

    fn shrink_buffers(&mut self) {
        AnyConnectionBackend::shrink_buffers(self)
    }

    fn flush(&mut self) -> BoxFuture<'_, Result<(), Error>> {
        AnyConnectionBackend::flush(self)
    }

    fn should_flush(&self) -> bool {
        AnyConnectionBackend::should_flush(self)
    }
}

impl<W: Wrapper> TransactionManager for WrappedTransactions<W> {
    type Database = Wrapped<W>;

    fn begin<'conn>(
        conn: &'conn mut WrappedConnection<W>,
        statement: Option<Cow<'static, str>>,
    ) -> BoxFuture<'conn, Result<(), Error>> {
        AnyConnectionBackend::begin(conn, statement)
    }

    fn commit(conn: &mut WrappedConnection<W>) -> BoxFuture<'_, Result<(), Error>> {
        AnyConnectionBackend::commit(conn)
    }

    fn rollback(conn: &mut WrappedConnection<W>) -> BoxFuture<'_, Result<(), Error>> {
        AnyConnectionBackend::rollback(conn)
    }

    fn start_rollback(conn: &mut WrappedConnection<W>) {
        AnyConnectionBackend::start_rollback(conn)
    }

    fn get_transaction_depth(conn: &WrappedConnection<W>) -> usize {
        AnyConnectionBackend::get_transaction_depth(conn)
    }
}
