//! The sqlx traits that tie the driver's types into one family: the connection as a
//! `Connection` of [`GuardedSqlite`] with its [`GuardedOptions`], and its transactions. Each of
//! these names the others, so they live here, apart from the types they join (the connection in
//! `connection.rs`, the database in `database.rs`, the options in `options.rs`), which then
//! import one another in one direction only.

use super::connection::{GuardedConnection, GuardedTransactions};
use super::database::GuardedSqlite;
use super::options::GuardedOptions;
use futures::future::BoxFuture;
use sqlx::sqlite::SqliteTransactionManager;
use sqlx_core::Error;
use sqlx_core::connection::Connection;
use sqlx_core::transaction::{Transaction, TransactionManager};
use std::borrow::Cow;

/// The connection as a connection of [`GuardedSqlite`], which sqlx's registry requires; `Any`
/// calls its `AnyConnectionBackend` methods (in `connection.rs`) instead.
impl Connection for GuardedConnection {
    type Database = GuardedSqlite;
    type Options = GuardedOptions;

    fn close(self) -> BoxFuture<'static, Result<(), Error>> {
        Connection::close(self.sqlite)
    }

    fn close_hard(self) -> BoxFuture<'static, Result<(), Error>> {
        Connection::close_hard(self.sqlite)
    }

    fn ping(&mut self) -> BoxFuture<'_, Result<(), Error>> {
        Connection::ping(&mut self.sqlite)
    }

    fn begin(&mut self) -> BoxFuture<'_, Result<Transaction<'_, GuardedSqlite>, Error>> {
        Transaction::begin(self, None)
    }

    fn shrink_buffers(&mut self) {
        Connection::shrink_buffers(&mut self.sqlite)
    }

    fn flush(&mut self) -> BoxFuture<'_, Result<(), Error>> {
        Connection::flush(&mut self.sqlite)
    }

    fn should_flush(&self) -> bool {
        Connection::should_flush(&self.sqlite)
    }
}

impl TransactionManager for GuardedTransactions {
    type Database = GuardedSqlite;

    fn begin<'conn>(
        conn: &'conn mut GuardedConnection,
        statement: Option<Cow<'static, str>>,
    ) -> BoxFuture<'conn, Result<(), Error>> {
        SqliteTransactionManager::begin(&mut conn.sqlite, statement)
    }

    fn commit(conn: &mut GuardedConnection) -> BoxFuture<'_, Result<(), Error>> {
        SqliteTransactionManager::commit(&mut conn.sqlite)
    }

    fn rollback(conn: &mut GuardedConnection) -> BoxFuture<'_, Result<(), Error>> {
        SqliteTransactionManager::rollback(&mut conn.sqlite)
    }

    fn start_rollback(conn: &mut GuardedConnection) {
        SqliteTransactionManager::start_rollback(&mut conn.sqlite)
    }

    fn get_transaction_depth(conn: &GuardedConnection) -> usize {
        SqliteTransactionManager::get_transaction_depth(&conn.sqlite)
    }
}
