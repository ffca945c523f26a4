//! SQLite for sqlx's `Any` pools with a time limit on each statement, so a read the API gave
//! up on stops in the database too, as PostgreSQL's `statement_timeout` stops it there.
//!
//! Why a driver of our own: the store reads through `AnyPool`s (one code path for both
//! databases), and sqlx 0.8's `Any` driver gives no way to interrupt a SQLite statement. SQLite
//! stops one only through its connection's progress handler or `sqlite3_interrupt`, which sqlx
//! reaches only on a `SqliteConnection`. A request past its time limit dropped its future, but
//! the statement ran on in sqlx's worker thread to its end, holding a connection and a core.
//!
//! [`DRIVER`] takes the place of sqlx's SQLite driver in the `Any` registry
//! ([`super::install_drivers`]). Its connections hand every call to a `SqliteConnection`. One
//! opened from a URL carrying `statement_limit_ms` ([`limit_parameter`]) also installs a progress
//! handler and gives each statement a deadline as it starts; past it SQLite stops the statement
//! with `(code: 9) interrupted` and the connection is free again. A statement whose caller
//! gave up runs on to that deadline, and the connection's next statement waits for it. Without
//! the parameter (the writer, the indexer's own store) it is SQLite's connection unchanged. The
//! cost is a clock read every 10,000 virtual-machine steps and about a microsecond per
//! statement. One opened with `low_priority=true` ([`low_priority_parameter`]) lowers the
//! priority of its worker thread as it connects, for reads nobody waits on.
//!
//! The plumbing every driver of ours shares (a `Database`, options and a connection handing
//! each call to sqlx's own) is `wrapped_driver`'s; this module adds what SQLite's does
//! ([`guard::StatementGuard`]). Its tests drive statements, bound values, transactions and the
//! limit through the driver, and the store's tests run on nothing else.

mod guard;
mod options;

use sqlx_core::any::driver::AnyDriver;
use std::time::Duration;

/// The `Any` driver for `sqlite:` URLs, in place of `sqlx::sqlite::any::DRIVER`. Creating or
/// dropping a database through `Any` is not offered: the store creates its file on a native
/// SQLite connection.
pub(super) const DRIVER: AnyDriver = super::wrapped_driver::driver::<guard::StatementGuard>();

/// The query parameter (`key=value`) of a `sqlite:` URL that stops each statement of its
/// connections `limit` after the statement starts.
pub(super) fn limit_parameter(limit: Duration) -> String {
    format!("{}={}", options::LIMIT_PARAM, limit.as_millis())
}

/// The query parameter (`key=value`) of a `sqlite:` URL whose connections' worker threads run
/// at the lowest priority (see [`crate::priority`]), named `sqlite-low-N`.
pub(super) fn low_priority_parameter() -> String {
    format!("{}=true", options::LOW_PRIORITY_PARAM)
}

#[cfg(test)]
mod tests;
