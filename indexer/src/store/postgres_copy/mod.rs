//! PostgreSQL for sqlx's `Any` pools with bulk loads: rows sent with `COPY … FROM STDIN` in the
//! binary format, inside the transaction of the statements around them.
//!
//! Why a driver of our own: the store writes through `AnyConnection`s (one code path for both
//! databases) and a batch is one transaction, but sqlx 0.8's `Any` driver offers no `COPY`, and
//! its `AnyConnection` gives no way to the `PgConnection` underneath (whose `copy_in_raw` does
//! it). A multi-row `INSERT` costs PostgreSQL a parse, a plan and a bind of every value as a
//! parameter, and the writer a conversion of each through sqlx's generic arguments; `COPY`
//! streams the rows as they are stored.
//!
//! [`DRIVER`] takes the place of sqlx's PostgreSQL driver in the `Any` registry
//! ([`super::install_drivers`]). Its connections hand every call to a `PgConnection`, but for a
//! bulk load: a statement of the form [`copy_in`] writes, its rows given as the statement's
//! bound values, row after row. The connection reads the columns' types once per statement,
//! checks each value against its column's (a binary `COPY` does not cast as an `INSERT`
//! does) and sends the rows in one `COPY`. PostgreSQL never takes bound values with a `COPY`,
//! so no other statement meets the form.
//!
//! The plumbing every driver of ours shares (a `Database`, options and a connection handing
//! each call to sqlx's own) is `wrapped_driver`'s; this module adds what PostgreSQL's does
//! ([`copying::Copying`]). A failed load names its table ([`error`]); PostgreSQL's own
//! refusals stay database errors, and the connection is ready for the transaction's rollback.

mod copying;
mod encode;
#[cfg(test)]
mod encode_tests;
mod error;
mod statement;

use sqlx_core::any::driver::AnyDriver;

pub(super) use statement::copy_in;

/// The `Any` driver for `postgres:` URLs, in place of `sqlx::postgres::any::DRIVER`. Creating or
/// dropping a database through `Any` is not offered: the store never does.
pub(super) const DRIVER: AnyDriver = super::wrapped_driver::driver::<copying::Copying>();
