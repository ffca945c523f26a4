//! The `Database` that sqlx's driver registry asks [`super::DRIVER`] for. Only its connection
//! and options are ever used: `Any` prepares arguments and converts rows itself, so rows,
//! columns, values and statements of this database never exist ([`Unused`] has no values) and
//! it takes no arguments of its own ([`NoArguments`]).

use super::connection::{GuardedConnection, GuardedTransactions};
use sqlx::Either;
use sqlx::sqlite::{SqliteQueryResult, SqliteTypeInfo};
use sqlx_core::Error;
use sqlx_core::database::Database;
use std::borrow::Cow;

/// SQLite with a time limit per statement; named as sqlx's SQLite is, so `Any` connections
/// report the same backend name and URL scheme.
#[derive(Debug)]
pub(crate) enum GuardedSqlite {}

impl Database for GuardedSqlite {
    type Connection = GuardedConnection;
    type TransactionManager = GuardedTransactions;
    type Row = Unused;
    type QueryResult = SqliteQueryResult;
    type Column = Unused;
    type TypeInfo = SqliteTypeInfo;
    type Value = Unused;
    type ValueRef<'r> = Unused;
    type Arguments<'q> = NoArguments;
    type ArgumentBuffer<'q> = ();
    type Statement<'q> = Unused;
    const NAME: &'static str = "SQLite";
    const URL_SCHEMES: &'static [&'static str] = &["sqlite"];
}

/// Every associated type of [`GuardedSqlite`] that `Any` never builds: it has no values, so
/// each of its methods is an empty match.
#[derive(Debug)]
pub(crate) enum Unused {}

/// The arguments of [`GuardedSqlite`]: none; values are bound through `Any`.
#[derive(Debug, Default)]
pub(crate) struct NoArguments;

impl sqlx_core::row::Row for Unused {
    type Database = GuardedSqlite;

    fn columns(&self) -> &[Unused] {
        match *self {}
    }

    fn try_get_raw<I>(&self, _: I) -> Result<Unused, Error>
    where
        I: sqlx_core::column::ColumnIndex<Self>,
    {
        match *self {}
    }
}

impl sqlx_core::column::Column for Unused {
    type Database = GuardedSqlite;

    fn ordinal(&self) -> usize {
        match *self {}
    }

    fn name(&self) -> &str {
        match *self {}
    }

    fn type_info(&self) -> &SqliteTypeInfo {
        match *self {}
    }
}

impl sqlx_core::value::Value for Unused {
    type Database = GuardedSqlite;

    fn as_ref(&self) -> Unused {
        match *self {}
    }

    fn type_info(&self) -> Cow<'_, SqliteTypeInfo> {
        match *self {}
    }

    fn is_null(&self) -> bool {
        match *self {}
    }
}

impl sqlx_core::value::ValueRef<'_> for Unused {
    type Database = GuardedSqlite;

    fn to_owned(&self) -> Unused {
        match *self {}
    }

    fn type_info(&self) -> Cow<'_, SqliteTypeInfo> {
        match *self {}
    }

    fn is_null(&self) -> bool {
        match *self {}
    }
}

impl sqlx_core::statement::Statement<'_> for Unused {
    type Database = GuardedSqlite;

    fn to_owned(&self) -> Unused {
        match *self {}
    }

    fn sql(&self) -> &str {
        match *self {}
    }

    fn parameters(&self) -> Option<Either<&[SqliteTypeInfo], usize>> {
        match *self {}
    }

    fn columns(&self) -> &[Unused] {
        match *self {}
    }

    sqlx_core::impl_statement_query!(NoArguments);
}

impl<'q> sqlx_core::arguments::Arguments<'q> for NoArguments {
    type Database = GuardedSqlite;

    fn reserve(&mut self, _: usize, _: usize) {}

    fn add<T>(&mut self, _: T) -> Result<(), sqlx_core::error::BoxDynError>
    where
        T: sqlx_core::encode::Encode<'q, GuardedSqlite> + sqlx_core::types::Type<GuardedSqlite>,
    {
        Err("the guarded SQLite driver takes its arguments through sqlx's Any driver".into())
    }

    fn len(&self) -> usize {
        0
    }
}
