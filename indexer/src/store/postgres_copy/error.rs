//! How a bulk load fails, naming its table: refused before anything was sent ([`CopyError`]),
//! or refused by PostgreSQL ([`LoadFailed`], which stays a database error with PostgreSQL's
//! code, so the writer reads it as any statement's failure and its transaction rolls back).

use super::encode::EncodeError;
use sqlx::postgres::PgDatabaseError;
use sqlx_core::Error;
use sqlx_core::error::{DatabaseError, ErrorKind};
use std::borrow::Cow;
use std::fmt;

/// Why a bulk load was refused before any of it was sent.
#[derive(Debug, thiserror::Error)]
pub(super) enum CopyError {
    /// A value does not fit, or the values are not whole rows.
    #[error("bulk load into {table}: {source}")]
    Rows { table: String, source: EncodeError },
    /// A column of a type the binary rows are not written for.
    #[error("bulk load into {table}: column {column} is of type {ty}, which it cannot write")]
    UnsupportedType {
        table: String,
        column: String,
        ty: String,
    },
}

impl From<CopyError> for Error {
    fn from(refused: CopyError) -> Self {
        Error::Encode(Box::new(refused))
    }
}

/// An error PostgreSQL returned for a bulk load into `table`: its message, code and constraint
/// are PostgreSQL's, and its text adds the table, PostgreSQL's detail (a duplicate key's values)
/// and where in the rows it stopped.
#[derive(Debug)]
pub(super) struct LoadFailed {
    table: String,
    source: Box<dyn DatabaseError>,
}

impl LoadFailed {
    /// `error` with `table` named, if PostgreSQL returned it; any other error (the connection
    /// lost) is left as it is.
    pub(super) fn naming(table: &str, error: Error) -> Error {
        match error {
            Error::Database(source) => Error::Database(Box::new(Self {
                table: table.to_string(),
                source,
            })),
            other => other,
        }
    }

    fn postgres(&self) -> Option<&PgDatabaseError> {
        self.source.try_downcast_ref::<PgDatabaseError>()
    }
}

impl fmt::Display for LoadFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bulk load into {}: {}",
            self.table,
            self.source.message()
        )?;
        let postgres = self.postgres();
        if let Some(detail) = postgres.and_then(PgDatabaseError::detail) {
            write!(f, " ({detail})")?;
        }
        if let Some(place) = postgres.and_then(PgDatabaseError::r#where) {
            write!(f, " at {place}")?;
        }
        Ok(())
    }
}

impl std::error::Error for LoadFailed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(self.source.as_error())
    }
}

impl DatabaseError for LoadFailed {
    fn message(&self) -> &str {
        self.source.message()
    }

    fn code(&self) -> Option<Cow<'_, str>> {
        self.source.code()
    }

    fn as_error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        self
    }

    fn as_error_mut(&mut self) -> &mut (dyn std::error::Error + Send + Sync + 'static) {
        self
    }

    fn into_error(self: Box<Self>) -> Box<dyn std::error::Error + Send + Sync + 'static> {
        self
    }

    fn constraint(&self) -> Option<&str> {
        self.source.constraint()
    }

    fn table(&self) -> Option<&str> {
        self.source.table().or(Some(&self.table))
    }

    fn kind(&self) -> ErrorKind {
        self.source.kind()
    }
}
