//! `[api.reads]`: how much database work one API request may cause — rows read across its
//! resolvers, items in a list argument, and how long its queries may run before the database
//! is told to stop them.

use super::{ConfigError, ConfigResult};
use serde::Deserialize;
use std::time::Duration;

/// `[api.reads]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReadsConfig {
    /// Rows one request may read from the database, over all its fields together (pages of
    /// agents and of their payments, feedback, validations and history; the subgraph's
    /// entities). A request that would read more is refused rather than read on.
    pub max_rows_per_request: u64,
    /// Items a list argument may hold (`chainIds`, `tags`, the subgraph's `_in`, `_not_in`,
    /// `_contains` lists): each item widens the SQL and the plan.
    pub max_list_argument: usize,
    /// Seconds a query may run; past it the request is answered with an error, and a second
    /// later the database stops the statement (PostgreSQL: `statement_timeout`; SQLite: the
    /// read connections' progress handler).
    pub query_time_limit_secs: u64,
}

impl Default for ReadsConfig {
    fn default() -> Self {
        Self {
            // A full explorer page (100 agents with 20 payments, feedback and history each) reads
            // under 10,000 rows; five times that leaves room for any honest query.
            max_rows_per_request: 50_000,
            max_list_argument: 100,
            query_time_limit_secs: 10,
        }
    }
}

impl ReadsConfig {
    /// How long a query may run.
    pub fn query_time_limit(&self) -> Duration {
        Duration::from_secs(self.query_time_limit_secs)
    }

    /// How long the database lets one statement of the API run: a second past the query time
    /// limit, so the API answers first and the database then stops what it was still doing.
    pub fn statement_timeout(&self) -> Duration {
        self.query_time_limit() + Duration::from_secs(1)
    }

    /// Refuses zero for any of the limits (zero would refuse every request).
    pub(super) fn validate(&self) -> ConfigResult<()> {
        for (key, value) in [
            ("api.reads.max_rows_per_request", self.max_rows_per_request),
            ("api.reads.max_list_argument", self.max_list_argument as u64),
            (
                "api.reads.query_time_limit_secs",
                self.query_time_limit_secs,
            ),
        ] {
            if value == 0 {
                return Err(ConfigError::Key {
                    key: key.into(),
                    message: "must be at least 1".into(),
                });
            }
        }
        Ok(())
    }
}
