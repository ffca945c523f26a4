//! Why a subgraph request was refused while it was read, and where in the document: the text
//! the client reads in `errors[].message`, with the line and column of `errors[].locations`.

use crate::budget::BudgetError;
use async_graphql::parser::Pos;

/// Why a request was refused, with where in the document.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct QueryError {
    pub(crate) message: String,
    pub(crate) at: Option<Pos>,
}

impl From<BudgetError> for QueryError {
    fn from(error: BudgetError) -> Self {
        Self::new(error.subgraph_message(), error.position())
    }
}

impl QueryError {
    pub(crate) fn new(message: impl Into<String>, at: Option<Pos>) -> Self {
        Self {
            message: message.into(),
            at,
        }
    }
}
