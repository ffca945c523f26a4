//! The rows one request may read from the database, over all its resolvers: each read is
//! charged before it runs (with the most rows it can return), so a request that would read
//! more than its budget is refused instead of reading on. One budget per request, in the
//! request's context; the subgraph's nested lists are charged to the same kind of budget.

use std::sync::atomic::{AtomicU64, Ordering};

/// A request's row budget and what it has spent.
#[derive(Debug)]
pub(crate) struct RowBudget {
    /// Rows the request may read (`[api.reads] max_rows_per_request`).
    limit: u64,
    /// Rows charged so far.
    spent: AtomicU64,
}

/// A read refused because the request's rows would pass its budget.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "this request would read more than {limit} rows (at `{what}`); ask for fewer items or \
     smaller pages"
)]
pub(crate) struct OverBudget {
    /// The request's budget.
    pub(crate) limit: u64,
    /// The field whose read passed it.
    pub(crate) what: String,
}

impl RowBudget {
    /// A budget of `limit` rows, none spent.
    pub(crate) fn new(limit: u64) -> Self {
        Self {
            limit,
            spent: AtomicU64::new(0),
        }
    }

    /// Charges `rows` for reading `what`; refused (and nothing charged) when the request would
    /// then have read more than its budget.
    pub(crate) fn charge(&self, rows: u64, what: &str) -> Result<(), OverBudget> {
        let limit = self.limit;
        self.spent
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |spent| {
                spent.checked_add(rows).filter(|total| *total <= limit)
            })
            .map(|_| ())
            .map_err(|_| OverBudget {
                limit,
                what: what.to_string(),
            })
    }

    /// Rows charged so far.
    #[cfg(test)]
    pub(crate) fn spent(&self) -> u64 {
        self.spent.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_up_to_the_limit_and_refuses_past_it_without_charging() {
        let budget = RowBudget::new(10);
        budget.charge(4, "agents").unwrap();
        budget.charge(6, "feedback").unwrap();
        assert_eq!(budget.spent(), 10);
        let refused = budget.charge(1, "history").unwrap_err();
        assert_eq!(refused.what, "history");
        assert_eq!(budget.spent(), 10, "a refused charge spends nothing");
        assert_eq!(
            refused.to_string(),
            "this request would read more than 10 rows (at `history`); ask for fewer items or \
             smaller pages"
        );
        assert!(budget.charge(u64::MAX, "overflow").is_err());
    }
}
