//! SQL text with its bound values, built up piece by piece, and run against the read pool; the
//! rows it reads, each a JSON array, split into their values' JSON texts.

use agentindex_indexer::store::Dialect;
use serde_json::value::RawValue;
use sqlx::any::AnyArguments;
use sqlx::{Any, AnyPool, Arguments};

/// A value bound to a `?`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Bind {
    Text(String),
    Int(i64),
    Real(f64),
}

/// SQL text and the values of its `?`s, in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Sql {
    pub(crate) text: String,
    pub(crate) binds: Vec<Bind>,
}

impl crate::read::pages::SqlText for Sql {
    fn push_text(&mut self, text: &str) {
        self.push(text);
    }
}

impl Sql {
    /// Plain text.
    pub(crate) fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            binds: Vec::new(),
        }
    }

    /// Appends text.
    pub(crate) fn push(&mut self, text: &str) -> &mut Self {
        self.text.push_str(text);
        self
    }

    /// Appends a `?` bound to `value`.
    pub(crate) fn bind(&mut self, value: Bind) -> &mut Self {
        self.text.push('?');
        self.binds.push(value);
        self
    }

    /// Appends `text`, whose `?`s are bound to `values` in order.
    pub(crate) fn push_bound(
        &mut self,
        text: &str,
        values: impl IntoIterator<Item = Bind>,
    ) -> &mut Self {
        let before = self.binds.len();
        self.text.push_str(text);
        self.binds.extend(values);
        debug_assert_eq!(
            text.matches('?').count(),
            self.binds.len() - before,
            "a value for each `?` of {text}"
        );
        self
    }

    /// Appends another piece with its binds.
    pub(crate) fn append(&mut self, other: Sql) -> &mut Self {
        self.text.push_str(&other.text);
        self.binds.extend(other.binds);
        self
    }

    /// Runs the statement, whose one column is a JSON array per row (as text), and returns
    /// each row's text ([`parse_row`] reads it). The statement is written for the pool's
    /// database but for its `?`s, which PostgreSQL numbers (`Dialect::statement`).
    pub(crate) async fn rows(self, pool: &AnyPool) -> sqlx::Result<Vec<String>> {
        let statement = Dialect::of_pool(pool).statement(&self.text);
        tracing::trace!(target: "agentindex::api::subgraph", sql = %statement, binds = ?self.binds, "reading");
        let mut arguments = AnyArguments::default();
        for bind in self.binds {
            let added = match bind {
                Bind::Text(text) => arguments.add(text),
                Bind::Int(int) => arguments.add(int),
                Bind::Real(real) => arguments.add(real),
            };
            added.map_err(sqlx::Error::Encode)?;
        }
        sqlx::query_scalar_with::<Any, String, _>(&statement, arguments)
            .fetch_all(pool)
            .await
    }
}

/// One row a statement read: the values of its JSON array, each as its JSON text, borrowed
/// from the row's text.
pub(crate) type Row<'t> = Vec<&'t RawValue>;

/// The values of the row `text` (a JSON array).
pub(crate) fn parse_row(text: &str) -> sqlx::Result<Row<'_>> {
    serde_json::from_str(text).map_err(|e| sqlx::Error::Decode(Box::new(e)))
}

/// The rows `texts`, each read by [`parse_row`].
pub(crate) fn parse_rows(texts: &[String]) -> sqlx::Result<Vec<Row<'_>>> {
    texts.iter().map(|text| parse_row(text)).collect()
}
