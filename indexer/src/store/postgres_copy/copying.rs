//! What [`super::DRIVER`] adds to each PostgreSQL connection ([`Copying`]): a bulk load (the
//! statement form of `statement.rs` with its rows bound) runs as PostgreSQL's `COPY … FROM
//! STDIN` in the binary format, on the same connection and so inside the same transaction as
//! the statements around it. Every other statement, and everything else, is PostgreSQL's own
//! connection, handed every call by the shared plumbing of `wrapped_driver`.

use super::encode::{self, Column, ColumnType};
use super::error::{CopyError, LoadFailed};
use super::statement::CopyTarget;
use crate::store::wrapped_driver::Wrapper;
use futures::future::{self, BoxFuture};
use futures::stream::{self, BoxStream, StreamExt};
use sqlx::Either;
use sqlx::postgres::{PgConnection, Postgres};
use sqlx_core::Error;
use sqlx_core::any::{AnyArguments, AnyConnectionBackend, AnyQueryResult, AnyRow, AnyValueKind};
use sqlx_core::column::Column as _;
use sqlx_core::executor::Executor;
use sqlx_core::statement::Statement;
use sqlx_core::type_info::TypeInfo;
use std::collections::HashMap;
use std::sync::Arc;
use url::Url;

/// The state of a connection of the driver, for its bulk loads.
#[derive(Debug, Default)]
pub(crate) struct Copying {
    /// The columns of each bulk load's statement run so far, with their types.
    columns: HashMap<String, Arc<[Column]>>,
    /// The rows of the latest bulk load, kept to encode the next one into (a batch's events
    /// are megabytes, and memory new to the process is slow to write the first time).
    rows: Vec<u8>,
    /// A `COPY` was started and not seen to its end: its caller dropped it midway, and the
    /// server still waits for its data. Nothing more can run on the connection.
    copy_unfinished: bool,
}

impl Copying {
    /// Loads `values` (whole rows of `target`'s columns) with `statement` on `pg`; returns the
    /// rows loaded.
    async fn copy_in(
        &mut self,
        pg: &mut PgConnection,
        statement: &str,
        target: CopyTarget<'_>,
        values: &[AnyValueKind<'_>],
    ) -> Result<u64, Error> {
        let columns = self.columns_of(pg, statement, target).await?;
        encode::rows(&mut self.rows, &columns, values).map_err(|source| CopyError::Rows {
            table: target.table.to_string(),
            source,
        })?;
        self.copy_unfinished = true;
        let loaded = load(pg, statement, &self.rows).await;
        // Reached whenever the load ran to its end, refused or not: the server is ready for
        // the next statement (a connection that failed says so at its next use).
        self.copy_unfinished = false;
        loaded.map_err(|error| LoadFailed::naming(target.table, error))
    }

    /// The columns of `target` with their types, read from the database once per statement.
    async fn columns_of(
        &mut self,
        pg: &mut PgConnection,
        statement: &str,
        target: CopyTarget<'_>,
    ) -> Result<Arc<[Column]>, Error> {
        if let Some(columns) = self.columns.get(statement) {
            return Ok(columns.clone());
        }
        let select = target.select();
        let prepared = Executor::prepare(&mut *pg, select.as_str())
            .await
            .map_err(|error| LoadFailed::naming(target.table, error))?;
        let columns = prepared
            .columns()
            .iter()
            .map(|column| {
                let ty = column.type_info().name();
                match ColumnType::of(ty) {
                    Some(ty) => Ok(Column {
                        name: column.name().to_string(),
                        ty,
                    }),
                    None => Err(CopyError::UnsupportedType {
                        table: target.table.to_string(),
                        column: column.name().to_string(),
                        ty: ty.to_string(),
                    }),
                }
            })
            .collect::<Result<Arc<[Column]>, CopyError>>()?;
        self.columns.insert(statement.to_string(), columns.clone());
        Ok(columns)
    }
}

/// Runs `statement` (a `COPY … FROM STDIN`) on `pg` with `data` as its rows.
async fn load(pg: &mut PgConnection, statement: &str, data: &[u8]) -> Result<u64, Error> {
    let mut copy = pg.copy_in_raw(statement).await?;
    copy.send(data).await?;
    copy.finish().await
}

impl Wrapper for Copying {
    type Base = Postgres;
    /// A `postgres:` URL asks nothing of the driver: every parameter is PostgreSQL's.
    type Params = ();

    fn split_url(url: &Url) -> Result<((), Url), Error> {
        Ok(((), url.clone()))
    }

    fn attach<'c>(_: &'c mut PgConnection, _: &'c ()) -> BoxFuture<'c, Result<Self, Error>> {
        Box::pin(future::ready(Ok(Self::default())))
    }

    fn usable(&self) -> Result<(), Error> {
        if self.copy_unfinished {
            return Err(Error::Protocol(
                "a COPY on this connection was abandoned midway; the connection must be closed"
                    .into(),
            ));
        }
        Ok(())
    }

    fn fetch_many<'q>(
        &'q mut self,
        pg: &'q mut PgConnection,
        query: &'q str,
        persistent: bool,
        arguments: Option<AnyArguments<'q>>,
    ) -> BoxStream<'q, sqlx::Result<Either<AnyQueryResult, AnyRow>>> {
        match (CopyTarget::of(query), arguments) {
            (Some(target), Some(arguments)) => stream::once(async move {
                let rows_affected = self.copy_in(pg, query, target, &arguments.values.0).await?;
                Ok(Either::Left(AnyQueryResult {
                    rows_affected,
                    last_insert_id: None,
                }))
            })
            .boxed(),
            (_, arguments) => AnyConnectionBackend::fetch_many(pg, query, persistent, arguments),
        }
    }

    fn fetch_optional<'q>(
        &'q mut self,
        pg: &'q mut PgConnection,
        query: &'q str,
        persistent: bool,
        arguments: Option<AnyArguments<'q>>,
    ) -> BoxFuture<'q, sqlx::Result<Option<AnyRow>>> {
        match (CopyTarget::of(query), arguments) {
            (Some(target), Some(arguments)) => Box::pin(async move {
                self.copy_in(pg, query, target, &arguments.values.0).await?;
                Ok(None)
            }),
            (_, arguments) => {
                AnyConnectionBackend::fetch_optional(pg, query, persistent, arguments)
            }
        }
    }

    fn shrink_buffers(&mut self) {
        self.rows = Vec::new();
    }
}
