//! The `Database` that sqlx's driver registry asks a wrapped driver for. Only its connection
//! and options are ever used: `Any` prepares arguments and converts rows itself, so rows,
//! columns, values and statements of this database never exist ([`Unused`] has no values) and
//! it takes no arguments of its own ([`NoArguments`]). Its name, URL schemes, query results
//! and type descriptions are the native database's, so `Any` connections report the same
//! backend name.

use super::Wrapper;
use super::connection::{WrappedConnection, WrappedTransactions};
use sqlx::Either;
use sqlx_core::Error;
use sqlx_core::database::Database;
use std::borrow::Cow;
use std::convert::Infallible;
use std::fmt;
use std::marker::PhantomData;

/// The native database of wrapper `W`, its connections wrapped. Never built: a database is a
/// type only.
pub(crate) struct Wrapped<W>(Infallible, PhantomData<fn() -> W>);

/// Every associated type of [`Wrapped`] that `Any` never builds: it has no values, so each of
/// its methods is an empty match.
pub(crate) struct Unused<W>(Infallible, PhantomData<fn() -> W>);

/// The arguments of [`Wrapped`]: none; values are bound through `Any`.
pub(crate) struct NoArguments<W>(PhantomData<fn() -> W>);

/// The native database's description of a type.
type BaseTypeInfo<W> = <<W as Wrapper>::Base as Database>::TypeInfo;

impl<W: Wrapper> Database for Wrapped<W> {
    type Connection = WrappedConnection<W>;
    type TransactionManager = WrappedTransactions<W>;
    type Row = Unused<W>;
    type QueryResult = <W::Base as Database>::QueryResult;
    type Column = Unused<W>;
    type TypeInfo = BaseTypeInfo<W>;
    type Value = Unused<W>;
    type ValueRef<'r> = Unused<W>;
    type Arguments<'q> = NoArguments<W>;
    type ArgumentBuffer<'q> = ();
    type Statement<'q> = Unused<W>;
    const NAME: &'static str = W::Base::NAME;
    const URL_SCHEMES: &'static [&'static str] = W::Base::URL_SCHEMES;
}

impl<W> fmt::Debug for Wrapped<W> {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {}
    }
}

impl<W> fmt::Debug for Unused<W> {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {}
    }
}

impl<W> fmt::Debug for NoArguments<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NoArguments")
    }
}

impl<W> Default for NoArguments<W> {
    fn default() -> Self {
        Self(PhantomData)
    }
}

impl<W: Wrapper> sqlx_core::row::Row for Unused<W> {
    type Database = Wrapped<W>;

    fn columns(&self) -> &[Unused<W>] {
        match self.0 {}
    }

    fn try_get_raw<I>(&self, _: I) -> Result<Unused<W>, Error>
    where
        I: sqlx_core::column::ColumnIndex<Self>,
    {
        match self.0 {}
    }
}

impl<W: Wrapper> sqlx_core::column::Column for Unused<W> {
    type Database = Wrapped<W>;

    fn ordinal(&self) -> usize {
        match self.0 {}
    }

    fn name(&self) -> &str {
        match self.0 {}
    }

    fn type_info(&self) -> &BaseTypeInfo<W> {
        match self.0 {}
    }
}

impl<W: Wrapper> sqlx_core::value::Value for Unused<W> {
    type Database = Wrapped<W>;

    fn as_ref(&self) -> Unused<W> {
        match self.0 {}
    }

    fn type_info(&self) -> Cow<'_, BaseTypeInfo<W>> {
        match self.0 {}
    }

    fn is_null(&self) -> bool {
        match self.0 {}
    }
}

impl<W: Wrapper> sqlx_core::value::ValueRef<'_> for Unused<W> {
    type Database = Wrapped<W>;

    fn to_owned(&self) -> Unused<W> {
        match self.0 {}
    }

    fn type_info(&self) -> Cow<'_, BaseTypeInfo<W>> {
        match self.0 {}
    }

    fn is_null(&self) -> bool {
        match self.0 {}
    }
}

impl<W: Wrapper> sqlx_core::statement::Statement<'_> for Unused<W> {
    type Database = Wrapped<W>;

    fn to_owned(&self) -> Unused<W> {
        match self.0 {}
    }

    fn sql(&self) -> &str {
        match self.0 {}
    }

    fn parameters(&self) -> Option<Either<&[BaseTypeInfo<W>], usize>> {
        match self.0 {}
    }

    fn columns(&self) -> &[Unused<W>] {
        match self.0 {}
    }

    sqlx_core::impl_statement_query!(NoArguments<W>);
}

impl<'q, W: Wrapper> sqlx_core::arguments::Arguments<'q> for NoArguments<W> {
    type Database = Wrapped<W>;

    fn reserve(&mut self, _: usize, _: usize) {}

    fn add<T>(&mut self, _: T) -> Result<(), sqlx_core::error::BoxDynError>
    where
        T: sqlx_core::encode::Encode<'q, Wrapped<W>> + sqlx_core::types::Type<Wrapped<W>>,
    {
        Err("a driver of the store takes its arguments through sqlx's Any driver".into())
    }

    fn len(&self) -> usize {
        0
    }
}
