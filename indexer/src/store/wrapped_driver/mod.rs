//! The plumbing of the store's own drivers for sqlx's `Any` pools: one of sqlx's databases
//! (SQLite, PostgreSQL) wrapped so that its connections add a behaviour of ours, every other call
//! handed to sqlx's own connection underneath. `sqlite_guard` stops SQLite statements past a
//! time limit; `postgres_copy` runs bulk loads as PostgreSQL's `COPY`.
//!
//! Why wrap: the store reads and writes through `AnyConnection`s (one code path for both
//! databases), and sqlx 0.8's `Any` driver gives no way to the native connection underneath,
//! where both behaviours live. A driver registered in its place ([`super::install_drivers`])
//! opens the native connection itself and keeps it.
//!
//! A [`Wrapper`] says what is added: the parameters it reads off the URL, the state it attaches
//! to each connection as it opens, and the statements it runs itself. [`driver`] turns one into
//! an `Any` driver. sqlx's registry wants a whole `Database` for a driver; `database.rs` holds
//! the parts `Any` never uses, `connection.rs` the connection `Any` calls, `options.rs` its
//! connect options and `family.rs` the traits that join them. This leans on sqlx-core items that
//! are public but hidden from its documentation (`AnyConnectionBackend`, `AnyDriver`, the values
//! of `AnyArguments`); the store's tests run on nothing else, on both databases.

mod connection;
mod database;
mod family;
mod options;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
#[cfg(test)]
pub(crate) use options::WrappedOptions;
use sqlx::Either;
use sqlx_core::Error;
use sqlx_core::any::driver::AnyDriver;
use sqlx_core::any::{AnyArguments, AnyConnectionBackend, AnyQueryResult, AnyRow};
use sqlx_core::connection::Connection;
use sqlx_core::database::Database;
use std::fmt::Debug;
use url::Url;

/// The native connection of wrapper `W`'s database.
pub(crate) type BaseConnection<W> = <<W as Wrapper>::Base as Database>::Connection;
/// The native connect options of wrapper `W`'s database.
pub(crate) type BaseOptions<W> = <BaseConnection<W> as Connection>::Options;

/// What a driver of ours adds to one of sqlx's: implemented by the state it keeps for each
/// connection. Every method but [`Wrapper::split_url`] and [`Wrapper::attach`] has a default
/// that hands the call on to the native connection unchanged.
pub(crate) trait Wrapper: Debug + Send + Sized + 'static {
    /// sqlx's database underneath, whose name and URL schemes the driver takes.
    type Base: Database<Connection: AnyConnectionBackend> + sqlx::database::HasStatementCache;
    /// What a URL asks of the wrapper beyond the native options.
    type Params: Debug + Clone + Send + Sync + 'static;

    /// Splits the wrapper's own parameters off `url`: what they ask, and the URL left for the
    /// native options (which refuse parameters they do not know).
    fn split_url(url: &Url) -> Result<(Self::Params, Url), Error>;

    /// The native options as `params` change them: unchanged unless a wrapper says otherwise.
    fn adjust(options: BaseOptions<Self>, _params: &Self::Params) -> BaseOptions<Self> {
        options
    }

    /// The state of a connection just opened on `base` with `params`.
    fn attach<'c>(
        base: &'c mut BaseConnection<Self>,
        params: &'c Self::Params,
    ) -> BoxFuture<'c, Result<Self, Error>>;

    /// Whether the connection can run anything more; checked before every call that talks to
    /// the database. Always, unless a wrapper left the native connection midway.
    fn usable(&self) -> Result<(), Error> {
        Ok(())
    }

    /// Runs `query` on `base`, its results streamed.
    fn fetch_many<'q>(
        &'q mut self,
        base: &'q mut BaseConnection<Self>,
        query: &'q str,
        persistent: bool,
        arguments: Option<AnyArguments<'q>>,
    ) -> BoxStream<'q, sqlx::Result<Either<AnyQueryResult, AnyRow>>> {
        AnyConnectionBackend::fetch_many(base, query, persistent, arguments)
    }

    /// Runs `query` on `base` for its first row, if any.
    fn fetch_optional<'q>(
        &'q mut self,
        base: &'q mut BaseConnection<Self>,
        query: &'q str,
        persistent: bool,
        arguments: Option<AnyArguments<'q>>,
    ) -> BoxFuture<'q, sqlx::Result<Option<AnyRow>>> {
        AnyConnectionBackend::fetch_optional(base, query, persistent, arguments)
    }

    /// Lets go of memory kept for later statements, as the native connection's buffers do.
    fn shrink_buffers(&mut self) {}
}

/// The `Any` driver of wrapper `W`, in place of sqlx's own for `W`'s database. Creating or
/// dropping a database through `Any` is not offered: the store never does.
pub(super) const fn driver<W: Wrapper>() -> AnyDriver {
    AnyDriver::without_migrate::<database::Wrapped<W>>()
}
